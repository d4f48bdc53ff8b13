package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// RPC is one request to `codex app-server` (JSON-RPC over stdio, one
// message a line, no "jsonrpc" member, as Codex's app-server speaks it).
type RPC struct {
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
}

// RPCResult is the answer to one RPC: its result or its error, verbatim.
type RPCResult struct {
	Method string          `json:"method"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// AppServer runs `codex app-server` in the home against the mock, sends
// initialize and then each request in turn, waiting for each answer (at
// most the home's timeout in all), closes its input and records what the
// run did. Notifications and server requests are read and dropped. A
// failed request does not stop the rest: its error is in the result.
func (h *Home) AppServer(ctx context.Context, reqs []RPC) (*Run, []RPCResult, error) {
	args := append([]string{"app-server"}, h.ProviderArgs()...)
	s, err := h.startPiped(ctx, args)
	if err != nil {
		return nil, nil, err
	}
	in, out := s.stdin, bufio.NewReaderSize(s.stdoutPipe, 1<<20)
	next := 0
	call := func(method string, params any) (RPCResult, error) {
		next++
		b, _ := json.Marshal(map[string]any{"id": next, "method": method, "params": params})
		if _, err := in.Write(append(b, '\n')); err != nil {
			return RPCResult{}, err
		}
		for {
			line, err := out.ReadBytes('\n')
			if err != nil {
				return RPCResult{}, fmt.Errorf("conformance: app-server closed before answering %s: %w", method, err)
			}
			var msg struct {
				ID     *json.RawMessage `json:"id"`
				Method string           `json:"method"`
				Result json.RawMessage  `json:"result"`
				Error  json.RawMessage  `json:"error"`
			}
			if json.Unmarshal(line, &msg) != nil || msg.ID == nil || msg.Method != "" {
				continue // a notification or a request of the server
			}
			if string(*msg.ID) != fmt.Sprint(next) {
				continue
			}
			return RPCResult{Method: method, Result: msg.Result, Error: msg.Error}, nil
		}
	}
	var results []RPCResult
	fail := func(err error) (*Run, []RPCResult, error) {
		in.Close()
		s.cancel()
		io.Copy(io.Discard, out)
		r, _ := s.Wait()
		if r != nil {
			err = fmt.Errorf("%w\nstderr: %s", err, tail([]byte(r.Stderr), 1500))
		}
		return r, results, err
	}
	done := make(chan error, 1)
	go func() {
		init := map[string]any{"clientInfo": map[string]any{"name": "rollout-conformance", "version": "1.0.0"}}
		if h.ExperimentalAPI {
			init["capabilities"] = map[string]any{"experimentalApi": true}
		}
		r, err := call("initialize", init)
		if err == nil && r.Error != nil {
			err = fmt.Errorf("conformance: app-server initialize: %s", r.Error)
		}
		if err == nil {
			b, _ := json.Marshal(map[string]any{"method": "initialized"})
			_, err = in.Write(append(b, '\n'))
		}
		for _, q := range reqs {
			if err != nil {
				break
			}
			var r RPCResult
			if r, err = call(q.Method, q.Params); err == nil {
				results = append(results, r)
			}
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fail(err)
		}
	case <-time.After(h.Timeout):
		s.cancel()
		<-done
		return fail(fmt.Errorf("conformance: app-server: no answer within %s", h.Timeout))
	}
	in.Close()
	io.Copy(io.Discard, out) // until it exits: Wait must not race the reads
	r, err := s.Wait()
	return r, results, err
}

// startPiped starts codex like Start, with its standard input and output
// as pipes for the caller (stdout is not recorded in the Run).
func (h *Home) startPiped(ctx context.Context, args []string) (*Started, error) {
	s, err := h.prepare(ctx, args, h.Timeout+10*time.Second)
	if err != nil {
		return nil, err
	}
	s.cmd.Stderr = &s.stderr
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		s.cancel()
		return nil, err
	}
	if s.stdoutPipe, err = s.cmd.StdoutPipe(); err != nil {
		s.cancel()
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		s.cancel()
		return nil, fmt.Errorf("conformance: codex %s: %w", strings.Join(args, " "), err)
	}
	return s, nil
}
