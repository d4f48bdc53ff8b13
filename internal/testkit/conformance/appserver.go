package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// RPC is one request to `codex app-server` (JSON-RPC over stdio, one
// message a line, no "jsonrpc" member, as Codex's app-server speaks it).
type RPC struct {
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
	// Until names a notification to wait for after the answer (e.g.
	// "turn/completed": turn/start answers before its turn runs).
	Until string `json:"until,omitempty"`
}

// ThreadPlaceholder in a request's params stands for the id of the thread
// the last answer named (thread/start's result.thread.id), so that one
// app-server run can start a thread and then drive it.
const ThreadPlaceholder = "$THREAD"

// DynamicToolOutput is what the harness answers to Codex's item/tool/call
// requests (a dynamic tool the client declared at thread/start).
const DynamicToolOutput = "conformance dynamic tool output"

// RPCResult is the answer to one RPC: its result or its error, verbatim.
type RPCResult struct {
	Method string          `json:"method"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// AppServer runs `codex app-server` in the home against the mock, sends
// initialize and then each request in turn, waiting for each answer (at
// most the home's timeout in all), closes its input and records what the
// run did. Notifications are read and dropped; server requests are
// answered (serverAnswer). A failed request does not stop the rest: its
// error is in the result. Experimental asks for the app-server's
// experimental API at initialize (thread/start's dynamicTools needs it).
func (h *Home) AppServer(ctx context.Context, reqs []RPC) (*Run, []RPCResult, error) {
	return h.appServer(ctx, reqs, false)
}

// AppServerExperimental is AppServer with the experimental API enabled.
func (h *Home) AppServerExperimental(ctx context.Context, reqs []RPC) (*Run, []RPCResult, error) {
	return h.appServer(ctx, reqs, true)
}

func (h *Home) appServer(ctx context.Context, reqs []RPC, experimental bool) (*Run, []RPCResult, error) {
	args := append([]string{"app-server"}, h.ProviderArgs()...)
	s, err := h.startPiped(ctx, args)
	if err != nil {
		return nil, nil, err
	}
	in, out := s.stdin, bufio.NewReaderSize(s.stdoutPipe, 1<<20)
	next := 0
	thread := ""
	write := func(v any) error {
		b, _ := json.Marshal(v)
		_, err := in.Write(append(b, '\n'))
		return err
	}
	// read returns the next answer or notification, answering the
	// server's requests on the way.
	type message struct {
		ID     *json.RawMessage `json:"id"`
		Method string           `json:"method"`
		Params json.RawMessage  `json:"params"`
		Result json.RawMessage  `json:"result"`
		Error  json.RawMessage  `json:"error"`
	}
	read := func(what string) (message, error) {
		for {
			line, err := out.ReadBytes('\n')
			if err != nil {
				return message{}, fmt.Errorf("conformance: app-server closed before %s: %w", what, err)
			}
			var msg message
			if json.Unmarshal(line, &msg) != nil {
				continue
			}
			if msg.ID != nil && msg.Method != "" {
				result, rpcErr := serverAnswer(msg.Method)
				reply := map[string]any{"id": msg.ID}
				if rpcErr != "" {
					reply["error"] = map[string]any{"code": -32601, "message": rpcErr}
				} else {
					reply["result"] = result
				}
				if err := write(reply); err != nil {
					return message{}, err
				}
				continue
			}
			return msg, nil
		}
	}
	call := func(method string, params any, until string) (RPCResult, error) {
		next++
		b, _ := json.Marshal(params)
		if thread != "" {
			b = []byte(strings.ReplaceAll(string(b), ThreadPlaceholder, thread))
		}
		if err := write(map[string]any{"id": next, "method": method, "params": json.RawMessage(b)}); err != nil {
			return RPCResult{}, err
		}
		var res RPCResult
		for {
			msg, err := read("answering " + method)
			if err != nil {
				return RPCResult{}, err
			}
			if msg.ID == nil || msg.Method != "" || string(*msg.ID) != fmt.Sprint(next) {
				continue // a notification, or an answer to an earlier request
			}
			res = RPCResult{Method: method, Result: msg.Result, Error: msg.Error}
			break
		}
		if id := gjson.GetBytes(res.Result, "thread.id").String(); id != "" {
			thread = id
		}
		for until != "" && res.Error == nil {
			msg, err := read("sending " + until)
			if err != nil {
				return res, err
			}
			if msg.ID == nil && msg.Method == until {
				break
			}
		}
		return res, nil
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
		if experimental {
			init["capabilities"] = map[string]any{"experimentalApi": true}
		}
		r, err := call("initialize", init, "")
		if err == nil && r.Error != nil {
			err = fmt.Errorf("conformance: app-server initialize: %s", r.Error)
		}
		if err == nil {
			err = write(map[string]any{"method": "initialized"})
		}
		for _, q := range reqs {
			if err != nil {
				break
			}
			var r RPCResult
			if r, err = call(q.Method, q.Params, q.Until); err == nil {
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

// serverAnswer is the harness's answer to a request of the app-server:
// a dynamic tool call gets DynamicToolOutput; anything else an error
// message (the harness approves nothing).
func serverAnswer(method string) (result any, errMessage string) {
	if method == "item/tool/call" {
		return map[string]any{"success": true, "contentItems": []map[string]any{{"type": "inputText", "text": DynamicToolOutput}}}, ""
	}
	return nil, "the conformance harness does not answer " + method
}
