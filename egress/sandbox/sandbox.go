package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cornus-dev/cornus/egress"
)

// Options configure a Sandbox.
type Options struct {
	// Command is the child's command, without its standard streams and
	// environment (the sandbox sets them). Nil: this executable with
	// Subcommand, except in a test binary, which would run its tests
	// instead unless its TestMain serves IsChild: a test says so by
	// setting Command.
	Command func() (*exec.Cmd, error)
	// Memory is how much address space the child may grow by (default
	// 1 GiB).
	Memory uint64
	// Log hears of the child's starts and deaths (nil: nowhere).
	Log *slog.Logger
}

const (
	// answerWithin is how long the parent waits for an answer: a child's
	// every run ends by egress.WallBound, so one that has not answered
	// by then (plus slack for the pipe) is stuck in native code, and is
	// killed.
	answerWithin = egress.WallBound + time.Second
	// startWithin bounds a start: the child must greet by then.
	startWithin = 10 * time.Second
	// A child that dies younger than youngDeath is restarted after a
	// backoff, doubling from minBackoff up to maxBackoff.
	youngDeath = 5 * time.Second
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// Sandbox runs PAC scripts in a child process. It is an egress.Runner,
// safe for concurrent use.
type Sandbox struct {
	o       Options
	nextID  atomic.Uint64
	answers answers

	mu      sync.Mutex
	cur     *child   // the live child, nil when none
	start   *attempt // the start under way, nil when none
	backoff time.Duration
	closed  bool
}

var _ egress.Runner = (*Sandbox)(nil)

// attempt is one start of a child; done closes when it ends.
type attempt struct {
	done chan struct{}
	c    *child
	err  error
}

// New makes a sandbox; its child starts on first use.
func New(o Options) *Sandbox {
	if o.Memory == 0 {
		o.Memory = defaultMemory
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Command == nil {
		o.Command = func() (*exec.Cmd, error) {
			// A test binary has registered the testing flags by now (without
			// importing testing here, which would link it into cornus).
			if flag.Lookup("test.run") != nil {
				return nil, errors.New("a test binary runs no child by default: set sandbox.Options.Command")
			}
			return SelfCommand()
		}
	}
	return &Sandbox{o: o}
}

// Close ends the child; later decisions deny.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	s.closed = true
	c := s.cur
	s.mu.Unlock()
	if c != nil {
		c.kill("the sandbox closed")
		<-c.done
	}
	return nil
}

// Pid is the running child's process id (0: none), for tests.
func (s *Sandbox) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return 0
	}
	return s.cur.cmd.Process.Pid
}

// SelfCommand is this executable with Subcommand.
func SelfCommand() (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.Command(exe, Subcommand), nil
}

var errClosed = errors.New("the PAC sandbox is closed")

// child is the live child, started (or restarted) if none runs; callers
// arriving during a start wait for it.
func (s *Sandbox) child() (*child, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	if c := s.cur; c != nil && !c.isDead() {
		s.mu.Unlock()
		return c, nil
	}
	a := s.start
	if a == nil {
		a = &attempt{done: make(chan struct{})}
		s.start = a
		wait := s.backoff
		go s.run(a, wait)
	}
	s.mu.Unlock()
	// A decision waits for a start no longer than for an answer.
	t := time.NewTimer(answerWithin)
	defer t.Stop()
	select {
	case <-a.done:
		return a.c, a.err
	case <-t.C:
		return nil, fmt.Errorf("the PAC sandbox is still starting after %v", answerWithin)
	}
}

// run makes attempt a after waiting wait.
func (s *Sandbox) run(a *attempt, wait time.Duration) {
	time.Sleep(wait)
	c, err := s.spawn()
	s.mu.Lock()
	if err == nil && s.closed {
		c.kill("the sandbox closed")
		c, err = nil, errClosed
	}
	a.c, a.err = c, err
	s.start = nil
	if err == nil {
		s.cur = c
	} else {
		s.backoff = nextBackoff(s.backoff)
	}
	s.mu.Unlock()
	close(a.done)
	if err != nil {
		s.o.Log.Warn("PAC sandbox did not start", "err", err)
	}
}

func nextBackoff(b time.Duration) time.Duration {
	return min(max(2*b, minBackoff), maxBackoff)
}

// died notes the death of c, which served: a child that died young
// restarts after a backoff. The next child starts now, not on the next
// decision, so decisions do not wait for it.
func (s *Sandbox) died(c *child, lived time.Duration) {
	s.mu.Lock()
	if s.cur != c {
		s.mu.Unlock()
		return
	}
	s.cur = nil
	if lived < youngDeath {
		s.backoff = nextBackoff(s.backoff)
	} else {
		s.backoff = 0
	}
	closed := s.closed
	s.mu.Unlock()
	if !closed {
		go func() { _, _ = s.child() }()
	}
}

// spawn starts a child and waits for its greeting.
func (s *Sandbox) spawn() (*child, error) {
	cmd, err := s.o.Command()
	if err != nil {
		return nil, fmt.Errorf("PAC sandbox: its command: %w", err)
	}
	// The child needs no environment of the server's (tokens live
	// there): only what the Go runtime reads, and its bound.
	cmd.Env = []string{EnvMemory + "=" + strconv.FormatUint(s.o.Memory, 10)}
	for _, k := range []string{"GOMAXPROCS", "GOGC", "GODEBUG", "GOTRACEBACK"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Dir = "/"
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, stdin: stdin, enc: json.NewEncoder(stdin), pending: map[uint64]chan response{},
		done: make(chan struct{}), stderr: &head{max: 2048}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("PAC sandbox: start %s: %w", cmd.Path, err)
	}
	c.started = time.Now()
	dec := json.NewDecoder(stdout)
	greeted := make(chan error, 1)
	go func() {
		var hello response
		err := dec.Decode(&hello)
		if err == nil && (hello.ID != 0 || hello.By != "ready") {
			err = fmt.Errorf("greeted with %+v", hello)
		}
		greeted <- err
		if err == nil {
			c.read(dec)
		}
		c.reap(s)
	}()
	t := time.NewTimer(startWithin)
	defer t.Stop()
	select {
	case err = <-greeted:
	case <-t.C:
		err = fmt.Errorf("no greeting within %v", startWithin)
	}
	if err != nil {
		c.kill("it did not greet")
		<-c.done
		return nil, fmt.Errorf("PAC sandbox: %s %s: %w%s", cmd.Path, strings.Join(cmd.Args[1:], " "), err, c.stderr.suffix())
	}
	s.o.Log.Info("PAC sandbox started", "pid", cmd.Process.Pid)
	return c, nil
}

// child is one child process.
type child struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	started time.Time
	stderr  *head

	wmu sync.Mutex
	enc *json.Encoder

	mu      sync.Mutex
	pending map[uint64]chan response
	dead    bool
	why     string // why the parent killed it
	done    chan struct{}
}

var (
	errDied    = errors.New("the PAC sandbox died")
	errTimeout = fmt.Errorf("no answer within %v", answerWithin)
)

// read hands each answer to its caller.
func (c *child) read(dec *json.Decoder) {
	for {
		var r response
		if err := dec.Decode(&r); err != nil {
			return
		}
		c.mu.Lock()
		ch := c.pending[r.ID]
		delete(c.pending, r.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
}

// reap waits for the child's end, fails its pending calls and tells s.
func (c *child) reap(s *Sandbox) {
	c.kill("") // its stdout closed: it is dying or gone
	err := c.cmd.Wait()
	c.mu.Lock()
	c.dead = true
	c.pending = nil
	why := c.why
	c.mu.Unlock()
	close(c.done)
	lived := time.Since(c.started)
	if why == "" {
		why = fmt.Sprint(err)
	}
	s.o.Log.Warn("PAC sandbox exited", "pid", c.cmd.Process.Pid, "why", why, "lived", lived.Round(time.Millisecond).String(),
		"stderr", c.stderr.String())
	s.died(c, lived)
}

func (c *child) isDead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

// kill ends the process (why: for the log; "" keeps an earlier reason).
func (c *child) kill(why string) {
	c.mu.Lock()
	if c.why == "" {
		c.why = why
	}
	c.mu.Unlock()
	_ = c.stdin.Close()
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
}

// call sends r and waits for its answer: errDied when the child dies
// first, errTimeout (and the child killed) past answerWithin.
func (c *child) call(r request) (response, error) {
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.dead || c.pending == nil {
		c.mu.Unlock()
		return response{}, errDied
	}
	c.pending[r.ID] = ch
	c.mu.Unlock()
	var timedOut atomic.Bool
	// A timer, not a select: the write itself may block on a stuck child.
	t := time.AfterFunc(answerWithin, func() {
		timedOut.Store(true)
		c.kill(fmt.Sprintf("no answer to a %s within %v", r.Op, answerWithin))
	})
	defer t.Stop()
	c.wmu.Lock()
	err := c.enc.Encode(r)
	c.wmu.Unlock()
	if err != nil {
		c.kill("a write failed: " + err.Error())
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-c.done:
		select {
		case resp := <-ch:
			return resp, nil
		default:
		}
		if timedOut.Load() {
			return response{}, errTimeout
		}
		return response{}, fmt.Errorf("%w: %s%s", errDied, c.exitReason(), c.stderr.suffix())
	}
}

func (c *child) exitReason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.why != "" {
		return c.why
	}
	return c.cmd.ProcessState.String()
}

// head keeps the first max bytes written to it: where a fatal error's
// cause is.
type head struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (h *head) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (h *head) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.TrimSpace(string(h.b))
}

// suffix is ": " and the first lines of stderr, if any.
func (h *head) suffix() string {
	s := h.String()
	if s == "" {
		return ""
	}
	lines := strings.SplitN(s, "\n", 3)
	return " (" + strings.Join(lines[:min(2, len(lines))], "; ") + ")"
}

// Load compiles script in the child: its errors are the script's (or
// the sandbox's, when the child died compiling it).
func (s *Sandbox) Load(script string, o egress.PACOptions) (egress.Decider, error) {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d\x00%s", o.MyIP, o.Deadline, o.MaxHeapGrowth, script)))
	h := &handle{s: s, load: request{Op: opLoad, Key: hex.EncodeToString(sum[:]), Script: script, MyIP: o.MyIP,
		Deadline: o.Deadline, MaxHeapGrowth: o.MaxHeapGrowth}}
	var err error
	for try := 0; try < 2; try++ {
		var c *child
		if c, err = s.child(); err != nil {
			return nil, err
		}
		if err = h.loadOn(c); !errors.Is(err, errDied) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return h, nil
}
