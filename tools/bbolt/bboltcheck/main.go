// Command bboltcheck opens a bbolt file read-only with bbolt 1.3.6 (go.etcd.io/bbolt),
// runs tx.Check(), and prints one JSON document (one line) to stdout:
//
//	{"page_size": N,
//	 "buckets":   {PATH: {KEY: VALUE, ...}, ...},   // same format as mkfixtures' NAME.json
//	 "sequences": {PATH: N, ...},                  // only non-zero sequences
//	 "check_errors": ["...", ...],
//	 "meta_txid": N}
//
// Usage: bboltcheck FILE
//
// Exit status:
//
//	0  the file opened, was dumped, and Check found nothing
//	1  Check reported errors (the dump is still printed); errors found while dumping
//	   (e.g. a plain key in the root bucket) are reported here too, prefixed "dump: "
//	2  the file could not be opened (message on stderr, nothing on stdout), or bbolt
//	   panicked / crashed while dumping or checking (message on stderr; if the file had
//	   opened, the JSON is still printed with what was gathered and the panic text in
//	   check_errors, prefixed "panic: ")
//
// Corrupt files can make bbolt panic in goroutines we cannot recover (tx.Check runs
// in its own goroutine, and 1.3.6 rebuilds a NoFreelistSync freelist by panicking on
// the first error), or fault on a wild pointer into its mmap. So the real work is
// done by a worker: bboltcheck re-executes itself with a hidden first argument and
// reads the worker's stream of JSON messages; whatever the worker reported before it
// died is still put in the output. The worker lowers its own address-space limit
// (RLIMIT_AS) to 4 GB if it is higher, since a corrupt branch page can make bbolt
// descend forever, growing a slice until memory runs out. Still run it under a
// timeout on untrusted input, as tools/bbolt/run.sh does (with ulimit -v 4000000 too).
package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// workerArg is the hidden first argument that selects worker mode.
const workerArg = "--bboltcheck-worker"

// report is the JSON printed on stdout.
type report struct {
	PageSize    int                          `json:"page_size"`
	Buckets     map[string]map[string]string `json:"buckets"`
	Sequences   map[string]uint64            `json:"sequences"`
	CheckErrors []string                     `json:"check_errors"`
	MetaTxid    uint64                       `json:"meta_txid"`
}

// message is one item of the worker -> supervisor stream.
//
//	kind "open_error": Text              (the file could not be opened; worker exits)
//	kind "opened":     PageSize, MetaTxid
//	kind "dump":       Buckets, Sequences of one top-level bucket and its sub-buckets
//	                   (possibly partial if a "panic" follows); one message per
//	                   top-level bucket, so a crash keeps what was dumped before it
//	kind "dump_error": Text              (a problem found while dumping, not a panic)
//	kind "panic":      Text              (a recovered panic while dumping)
//	kind "check_error": Text             (one error from tx.Check)
//	kind "done"                           (Check finished, DB closed)
type message struct {
	Kind      string                       `json:"kind"`
	Text      string                       `json:"text,omitempty"`
	PageSize  int                          `json:"page_size,omitempty"`
	MetaTxid  uint64                       `json:"meta_txid,omitempty"`
	Buckets   map[string]map[string]string `json:"buckets,omitempty"`
	Sequences map[string]uint64            `json:"sequences,omitempty"`
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == workerArg {
		os.Exit(worker(os.Args[2]))
	}
	if len(os.Args) != 2 || strings.HasPrefix(os.Args[1], "-") {
		fmt.Fprintln(os.Stderr, "usage: bboltcheck FILE")
		os.Exit(2)
	}
	os.Exit(supervise(os.Args[1]))
}

// ---------------------------------------------------------------- supervisor

// supervise runs the worker on file, assembles the report and returns the exit code.
func supervise(file string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bboltcheck: cannot find own executable: %v\n", err)
		return 2
	}
	cmd := exec.Command(exe, workerArg, file)
	// Kill the worker if we die (e.g. killed by `timeout`).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bboltcheck: %v\n", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "bboltcheck: cannot start worker: %v\n", err)
		return 2
	}

	rep := report{
		Buckets:     map[string]map[string]string{},
		Sequences:   map[string]uint64{},
		CheckErrors: []string{},
	}
	var opened, done, panicked bool
	var openErr string
	dec := json.NewDecoder(stdout)
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			if err != io.EOF {
				// Truncated stream: the worker died mid-message. Drain the rest.
				_, _ = io.Copy(io.Discard, stdout)
			}
			break
		}
		switch m.Kind {
		case "open_error":
			openErr = m.Text
		case "opened":
			opened = true
			rep.PageSize = m.PageSize
			rep.MetaTxid = m.MetaTxid
		case "dump":
			for path, kv := range m.Buckets {
				rep.Buckets[path] = kv
			}
			for path, seq := range m.Sequences {
				rep.Sequences[path] = seq
			}
		case "dump_error":
			rep.CheckErrors = append(rep.CheckErrors, "dump: "+m.Text)
		case "panic":
			panicked = true
			rep.CheckErrors = append(rep.CheckErrors, "panic: "+m.Text)
		case "check_error":
			rep.CheckErrors = append(rep.CheckErrors, m.Text)
		case "done":
			done = true
		}
	}
	waitErr := cmd.Wait()

	if !opened {
		switch {
		case openErr != "":
			fmt.Fprintf(os.Stderr, "bboltcheck: %s: cannot open: %s\n", file, openErr)
		default:
			fmt.Fprintf(os.Stderr, "bboltcheck: %s: crashed while opening (%v): %s\n",
				file, waitErr, crashSummary(stderr.String()))
		}
		return 2
	}
	if !done {
		// The worker died after opening: a panic in a bbolt goroutine, a fault, OOM...
		panicked = true
		rep.CheckErrors = append(rep.CheckErrors, fmt.Sprintf(
			"panic: worker died before Check finished (%v): %s", waitErr, crashSummary(stderr.String())))
	}

	out, err := json.Marshal(&rep)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bboltcheck: %v\n", err)
		return 2
	}
	os.Stdout.Write(append(out, '\n'))

	switch {
	case panicked:
		for _, e := range rep.CheckErrors {
			if strings.HasPrefix(e, "panic: ") {
				fmt.Fprintf(os.Stderr, "bboltcheck: %s: %s\n", file, e)
			}
		}
		return 2
	case len(rep.CheckErrors) > 0:
		return 1
	default:
		return 0
	}
}

// crashSummary picks the interesting lines ("panic: ...", "fatal error: ...",
// "unexpected fault address ...") out of a Go crash report, or its tail.
func crashSummary(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:") ||
			strings.HasPrefix(line, "unexpected fault") || strings.HasPrefix(line, "runtime:") {
			keep = append(keep, strings.TrimSpace(line))
		}
	}
	if len(keep) > 0 {
		return strings.Join(keep, " | ")
	}
	s = strings.TrimSpace(s)
	if len(s) > 500 {
		s = "..." + s[len(s)-500:]
	}
	if s == "" {
		return "(no stderr)"
	}
	return s
}

// ---------------------------------------------------------------- worker

// emitter writes messages to stdout, one JSON document per line.
type emitter struct{ enc *json.Encoder }

func (e emitter) send(m message) {
	if err := e.enc.Encode(&m); err != nil {
		os.Exit(3) // supervisor gone
	}
}

// workerMemLimit caps the worker's address space (bytes).
const workerMemLimit = 4000000 * 1024

// worker opens file, dumps it, runs Check, streaming messages on stdout.
func worker(file string) int {
	out := emitter{enc: json.NewEncoder(os.Stdout)}

	// Lower RLIMIT_AS to workerMemLimit unless it is lower already (best effort).
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil && lim.Cur > workerMemLimit {
		lim.Cur = workerMemLimit
		_ = syscall.Setrlimit(syscall.RLIMIT_AS, &lim)
	}

	// Open read-only. Open and Begin can panic on garbage; recover into open_error.
	var db *bolt.DB
	var tx *bolt.Tx
	if err := catch(func() error {
		if _, err := os.Stat(file); err != nil {
			return err
		}
		var err error
		db, err = bolt.Open(file, 0444, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			return err
		}
		tx, err = db.Begin(false)
		return err
	}); err != nil {
		out.send(message{Kind: "open_error", Text: err.Error()})
		return 2
	}
	out.send(message{Kind: "opened", PageSize: db.Info().PageSize, MetaTxid: uint64(tx.ID())})

	// Dump every bucket. Faults on the mmap become panics so they can be recovered.
	// (A corrupt branch page can also send bbolt's cursor into an endless descent
	// that grows its stack until the memory limit kills us: hence the streaming.)
	err := catch(func() error {
		debug.SetPanicOnFault(true)
		defer debug.SetPanicOnFault(false)
		return dumpRoot(tx, out)
	})
	if err != nil {
		out.send(message{Kind: "panic", Text: "while dumping: " + err.Error()})
	}

	// Check. A panic inside tx.Check's goroutine kills this process; the
	// supervisor notices the missing "done".
	for e := range tx.Check() {
		out.send(message{Kind: "check_error", Text: e.Error()})
	}
	_ = catch(func() error { _ = tx.Rollback(); return db.Close() })
	out.send(message{Kind: "done"})
	return 0
}

// catch runs fn, turning a panic into an error.
func catch(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return fn()
}

// dumpRoot walks the root bucket. bbolt's API only puts buckets at the top level; a
// plain key there is reported as a dump error.
func dumpRoot(tx *bolt.Tx, out emitter) error {
	c := tx.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		b := tx.Bucket(k)
		if b == nil {
			out.send(message{Kind: "dump_error",
				Text: fmt.Sprintf("root bucket holds a plain key %x (value %d bytes)", k, len(v))})
			continue
		}
		if err := dumpTop(b, hex.EncodeToString(k), out); err != nil {
			return err
		}
	}
	return nil
}

// dumpTop dumps one top-level bucket into one "dump" message. The message is sent
// from a defer, so what was gathered is sent even while a panic unwinds.
func dumpTop(b *bolt.Bucket, path string, out emitter) error {
	part := message{Kind: "dump", Buckets: map[string]map[string]string{}, Sequences: map[string]uint64{}}
	defer out.send(part)
	return dumpBucket(b, path, &part)
}

// dumpBucket records bucket b (at hex path) and, recursively, its sub-buckets.
func dumpBucket(b *bolt.Bucket, path string, dump *message) error {
	kv := map[string]string{}
	dump.Buckets[path] = kv
	if s := b.Sequence(); s != 0 {
		dump.Sequences[path] = s
	}
	return b.ForEach(func(k, v []byte) error {
		// b.Bucket(k) is non-nil only for elements flagged as sub-buckets; it tells a
		// sub-bucket from a key with an empty value regardless of how v is returned.
		if child := b.Bucket(k); child != nil {
			return dumpBucket(child, path+"/"+hex.EncodeToString(k), dump)
		}
		kv[hex.EncodeToString(k)] = hex.EncodeToString(v)
		return nil
	})
}
