// memberlist-host: N hashicorp/memberlist members in one process on loopback, each with its
// own UDP and TCP port, for `npm run bench -- gossip --vs memberlist` (bench/suites/
// gossip-memberlist.ts drives it; this file is ours, memberlist is Debian's 0.2.2).
//
// Build (scripts/install-memberlist.sh installs Go and memberlist from Debian; there is no Go
// module proxy here):
//
//	GOPATH=/usr/share/gocode GO111MODULE=off go build -o memberlist-host .
//
// Faults: every member drops each datagram it sends with probability -drop (the same
// per-process drop rate the Conclave side applies); streams (TCP) are never dropped.
//
// Output, one JSON object per line on stdout, times `t` in wall-clock epoch ms:
//
//	{"kind":"listening","self":"m001","address":"127.0.0.1:PORT"}
//	{"kind":"ready","members":N}                      every member joined
//	{"t":T,"kind":"alive","self":S,"member":M}          S now holds M alive (NotifyJoin)
//	{"t":T,"kind":"dead","self":S,"member":M}           S holds M dead or left (NotifyLeave)
//	{"t":T,"kind":"suspect","self":S,"member":M}        S's own probe of M failed (its log)
//	{"t":T,"kind":"declared","self":S,"member":M}       S's own suspicion of M timed out
//	{"kind":"stats","members":[{"self":S,"messages":n,"bytes":b,"up":bool}]}
//
// Commands, one per line on stdin: `kill NAME` (Shutdown without leave: the others must
// detect it), `stats`, `quit`.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
)

// out serialises the JSON lines of every goroutine.
var out = struct {
	sync.Mutex
	w *bufio.Writer
}{w: bufio.NewWriter(os.Stdout)}

func emit(v map[string]interface{}) {
	line, err := json.Marshal(v)
	if err != nil {
		return
	}
	out.Lock()
	out.w.Write(line)
	out.w.WriteByte('\n')
	out.w.Flush()
	out.Unlock()
}

// nowMs is wall-clock epoch ms: the Conclave host prints the same, so a driver can compare
// events of both systems with the instant it killed a member.
func nowMs() float64 { return float64(time.Now().UnixMicro()) / 1000 }

// countingTransport wraps memberlist's NetTransport: it drops outgoing datagrams with the
// configured probability and counts what the member sends (datagrams and stream bytes).
type countingTransport struct {
	*memberlist.NetTransport
	drop     float64
	rng      *rand.Rand
	rngLock  sync.Mutex
	messages int64
	bytes    int64
	streams  chan net.Conn
}

// NetTransport is a NodeAwareTransport: memberlist calls the *Address methods, so those are
// the ones wrapped (WriteTo and DialTimeout are only shims to them).
func (t *countingTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	atomic.AddInt64(&t.messages, 1)
	atomic.AddInt64(&t.bytes, int64(len(b)))
	t.rngLock.Lock()
	lost := t.rng.Float64() < t.drop
	t.rngLock.Unlock()
	if lost {
		return time.Now(), nil
	}
	return t.NetTransport.WriteToAddress(b, a)
}

func (t *countingTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	return t.WriteToAddress(b, memberlist.Address{Addr: addr})
}

func (t *countingTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	conn, err := t.NetTransport.DialAddressTimeout(a, timeout)
	if err != nil {
		return nil, err
	}
	atomic.AddInt64(&t.messages, 1)
	return &countingConn{Conn: conn, t: t}, nil
}

func (t *countingTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

// StreamCh hands memberlist the accepted connections wrapped, so that the bytes it answers
// with (push-pull replies) count too.
func (t *countingTransport) StreamCh() <-chan net.Conn {
	return t.streams
}

func (t *countingTransport) forwardStreams() {
	for conn := range t.NetTransport.StreamCh() {
		t.streams <- &countingConn{Conn: conn, t: t}
	}
}

type countingConn struct {
	net.Conn
	t *countingTransport
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	atomic.AddInt64(&c.t.bytes, int64(n))
	return n, err
}

// events turns memberlist's callbacks into JSON lines.
type events struct{ self string }

// memberlist also tells a member about itself; the driver wants the others only.
func (e *events) NotifyJoin(n *memberlist.Node) {
	if n.Name != e.self {
		emit(map[string]interface{}{"t": nowMs(), "kind": "alive", "self": e.self, "member": n.Name})
	}
}
func (e *events) NotifyLeave(n *memberlist.Node) {
	if n.Name != e.self {
		emit(map[string]interface{}{"t": nowMs(), "kind": "dead", "self": e.self, "member": n.Name})
	}
}
func (e *events) NotifyUpdate(n *memberlist.Node) {}

// logWatcher reads a member's log for the two lines that name its own verdicts: memberlist
// reports suspicions and timeouts only there.
type logWatcher struct{ self string }

var (
	suspectLine  = regexp.MustCompile(`Suspect (\S+) has failed, no acks received`)
	declaredLine = regexp.MustCompile(`Marking (\S+) as failed, suspect timeout reached`)
)

func (w *logWatcher) Write(p []byte) (int, error) {
	text := string(p)
	if m := suspectLine.FindStringSubmatch(text); m != nil {
		emit(map[string]interface{}{"t": nowMs(), "kind": "suspect", "self": w.self, "member": m[1]})
	} else if m := declaredLine.FindStringSubmatch(text); m != nil {
		emit(map[string]interface{}{"t": nowMs(), "kind": "declared", "self": w.self, "member": m[1]})
	}
	return len(p), nil
}

type member struct {
	name      string
	list      *memberlist.Memberlist
	transport *countingTransport
	up        bool
}

type settings struct {
	members                                int
	drop                                   float64
	probeMs, probeTimeoutMs, gossipMs      int
	pushPullMs, gossipToDeadMs, joinSpread int
	indirect, suspicionMult, suspicionMax  int
	retransmitMult, gossipNodes, awareness int
	prefix                                 string
}

func parse() settings {
	var s settings
	flag.IntVar(&s.members, "members", 10, "members in this process")
	flag.Float64Var(&s.drop, "drop", 0, "probability that a sent datagram is dropped")
	flag.IntVar(&s.probeMs, "probe-ms", 200, "ProbeInterval")
	flag.IntVar(&s.probeTimeoutMs, "probe-timeout-ms", 100, "ProbeTimeout")
	flag.IntVar(&s.gossipMs, "gossip-ms", 50, "GossipInterval")
	flag.IntVar(&s.pushPullMs, "push-pull-ms", 2000, "PushPullInterval")
	flag.IntVar(&s.gossipToDeadMs, "gossip-to-the-dead-ms", 5000, "GossipToTheDeadTime")
	flag.IntVar(&s.joinSpread, "join-spread-ms", 2000, "members join over this span")
	flag.IntVar(&s.indirect, "indirect-checks", 3, "IndirectChecks")
	flag.IntVar(&s.suspicionMult, "suspicion-mult", 4, "SuspicionMult")
	flag.IntVar(&s.suspicionMax, "suspicion-max-timeout-mult", 6, "SuspicionMaxTimeoutMult")
	flag.IntVar(&s.retransmitMult, "retransmit-mult", 4, "RetransmitMult")
	flag.IntVar(&s.gossipNodes, "gossip-nodes", 3, "GossipNodes")
	flag.IntVar(&s.awareness, "awareness-max", 8, "AwarenessMaxMultiplier")
	flag.StringVar(&s.prefix, "prefix", "g", "member names are PREFIX001, PREFIX002, ...")
	flag.Parse()
	return s
}

func create(s settings, index int) (*member, error) {
	name := fmt.Sprintf("%s%03d", s.prefix, index+1)
	logger := log.New(&logWatcher{self: name}, "", 0)
	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{
		BindAddrs: []string{"127.0.0.1"}, BindPort: 0, Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	port := nt.GetAutoBindPort()
	transport := &countingTransport{
		NetTransport: nt, drop: s.drop, rng: rand.New(rand.NewSource(int64(port))),
		streams: make(chan net.Conn),
	}
	go transport.forwardStreams()
	c := memberlist.DefaultLocalConfig()
	c.Name = name
	c.BindAddr, c.BindPort = "127.0.0.1", port
	c.AdvertiseAddr, c.AdvertisePort = "127.0.0.1", port
	c.Transport = transport
	c.Logger = logger
	c.Events = &events{self: name}
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	c.ProbeInterval, c.ProbeTimeout = ms(s.probeMs), ms(s.probeTimeoutMs)
	c.GossipInterval, c.GossipNodes = ms(s.gossipMs), s.gossipNodes
	c.PushPullInterval, c.GossipToTheDeadTime = ms(s.pushPullMs), ms(s.gossipToDeadMs)
	c.IndirectChecks, c.RetransmitMult = s.indirect, s.retransmitMult
	c.SuspicionMult, c.SuspicionMaxTimeoutMult = s.suspicionMult, s.suspicionMax
	c.AwarenessMaxMultiplier = s.awareness
	list, err := memberlist.Create(c)
	if err != nil {
		return nil, err
	}
	emit(map[string]interface{}{"kind": "listening", "self": name,
		"address": fmt.Sprintf("127.0.0.1:%d", port)})
	return &member{name: name, list: list, transport: transport, up: true}, nil
}

func main() {
	s := parse()
	members := make([]*member, 0, s.members)
	for i := 0; i < s.members; i++ {
		m, err := create(s, i)
		if err != nil {
			fmt.Fprintf(os.Stderr, "memberlist-host: %v\n", err)
			os.Exit(1)
		}
		members = append(members, m)
	}
	seed := fmt.Sprintf("127.0.0.1:%d", members[0].list.LocalNode().Port)
	var wg sync.WaitGroup
	for i, m := range members[1:] {
		wg.Add(1)
		go func(i int, m *member) {
			defer wg.Done()
			time.Sleep(time.Duration(s.joinSpread*(i+1)/s.members) * time.Millisecond)
			for attempt := 0; ; attempt++ {
				if _, err := m.list.Join([]string{seed}); err == nil {
					return
				} else if attempt > 20 {
					fmt.Fprintf(os.Stderr, "memberlist-host: %s cannot join: %v\n", m.name, err)
					os.Exit(1)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}(i, m)
	}
	wg.Wait()
	emit(map[string]interface{}{"kind": "ready", "members": len(members)})
	commands(members)
}

func commands(members []*member) {
	byName := map[string]*member{}
	for _, m := range members {
		byName[m.name] = m
	}
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "kill":
			for _, name := range fields[1:] {
				if m := byName[name]; m != nil && m.up {
					m.up = false
					m.list.Shutdown()
				}
			}
		case "stats":
			var rows []map[string]interface{}
			for _, m := range members {
				rows = append(rows, map[string]interface{}{"self": m.name, "up": m.up,
					"messages": atomic.LoadInt64(&m.transport.messages),
					"bytes":    atomic.LoadInt64(&m.transport.bytes)})
			}
			emit(map[string]interface{}{"kind": "stats", "t": nowMs(), "members": rows})
		case "quit":
			for _, m := range members {
				if m.up {
					m.list.Shutdown()
				}
			}
			os.Exit(0)
		}
	}
	os.Exit(0)
}
