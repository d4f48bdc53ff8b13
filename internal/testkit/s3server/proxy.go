package s3server

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Counts are the requests that passed the counting proxy, by kind
// (path-style requests, as clients of a custom endpoint send them).
type Counts struct {
	Get       int // GetObject without a Range header
	RangedGet int // GetObject with one
	Head      int // HeadObject and HeadBucket
	List      int // ListObjects and ListObjectsV2
	Put       int // PutObject, CreateBucket, any PUT
	Other     int // anything else: ListBuckets, GetBucketLocation, POST, DELETE...
	// Failed counts the responses with a status of 400 or more, of any
	// kind (a rejected signature shows here).
	Failed int
}

// Total is the number of requests.
func (c Counts) Total() int {
	return c.Get + c.RangedGet + c.Head + c.List + c.Put + c.Other
}

type countingProxy struct {
	srv    *httptest.Server
	mu     sync.Mutex
	counts Counts
}

// CountingEndpoint is the address of a reverse proxy in front of the S3
// gateway that counts the requests passing it (Counts, ResetCounts), for
// tests of how many requests a read makes. The proxy forwards the Host
// header the client sent, which SigV4 signs: a client configured with
// this endpoint signs for the proxy's address and the gateway checks the
// signature against that same Host.
func (s *Server) CountingEndpoint() string {
	s.proxyOnce.Do(func() {
		target, _ := url.Parse(s.Endpoint)
		p := &countingProxy{}
		rp := &httputil.ReverseProxy{
			Rewrite: func(r *httputil.ProxyRequest) {
				r.SetURL(target)
				r.Out.Host = r.In.Host
			},
			ModifyResponse: func(resp *http.Response) error {
				if resp.StatusCode >= 400 {
					p.mu.Lock()
					p.counts.Failed++
					p.mu.Unlock()
				}
				return nil
			},
		}
		p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p.mu.Lock()
			p.counts.add(r)
			p.mu.Unlock()
			rp.ServeHTTP(w, r)
		}))
		s.t.Cleanup(p.srv.Close)
		s.proxy = p
	})
	return s.proxy.srv.URL
}

// Counts are the requests the counting proxy has seen since it started or
// was last reset.
func (s *Server) Counts() Counts {
	s.CountingEndpoint()
	s.proxy.mu.Lock()
	defer s.proxy.mu.Unlock()
	return s.proxy.counts
}

// ResetCounts zeroes the counts and returns them as they were.
func (s *Server) ResetCounts() Counts {
	s.CountingEndpoint()
	s.proxy.mu.Lock()
	defer s.proxy.mu.Unlock()
	c := s.proxy.counts
	s.proxy.counts = Counts{}
	return c
}

// listParams are the query parameters of a listing; a GET on a bucket with
// any other (?location, ?versioning, ?acl...) is a different call.
var listParams = map[string]bool{"list-type": true, "prefix": true, "delimiter": true, "max-keys": true,
	"continuation-token": true, "start-after": true, "marker": true, "encoding-type": true, "fetch-owner": true}

func (c *Counts) add(r *http.Request) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodHead:
		c.Head++
	case r.Method == http.MethodPut:
		c.Put++
	case r.Method != http.MethodGet || bucket == "":
		c.Other++
	case key != "":
		if r.Header.Get("Range") != "" {
			c.RangedGet++
		} else {
			c.Get++
		}
	default:
		for k := range r.URL.Query() {
			if !listParams[k] {
				c.Other++
				return
			}
		}
		c.List++
	}
}

// DelayedEndpoint is the address of a proxy in front of the S3 gateway that
// holds every request for delay before passing it on: a store on the far
// side of a network (a cloud region's tens of milliseconds) for
// benchmarks of what waits on latency.
func (s *Server) DelayedEndpoint(delay time.Duration) string {
	target, _ := url.Parse(s.Endpoint)
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		rp.ServeHTTP(w, r)
	}))
	s.t.Cleanup(srv.Close)
	return srv.URL
}
