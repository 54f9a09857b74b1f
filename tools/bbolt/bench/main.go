// Command bench runs crashlab's seed benchmark shapes on bbolt itself (go.etcd.io/bbolt 1.3.6
// from Debian), with the same keys, values and schedule as the Rust benchmarks in
// bench/benches/peers.rs, so that tools/bench/run-all.sh can put them in one table.
//
// Usage: bench [-engines a,b] [-groups g,h] [-modes sync] [-warmup 1s] [-measure 3s] [-samples 20]
//
//	bench -count ENGINE/SHAPE/MODE -n N   (N operations untimed, for cachegrind)
//	bench -serve ENGINE/SHAPE/MODE        (blocks on request, for bench/benches/interleaved.rs)
//
// Shapes (groups): get, get100, get_value, set, set100, delete, large_set, reopen,
// group_commit — see peers.rs. Sizes:
// 16-byte keys (a counter as a big-endian u128), 100-byte values, 10,000 keys pre-filled in
// transactions of 1,000; the large DB held 2,000 values of 1 MiB (20 per transaction), all
// deleted (500 per transaction). One key per transaction unless the shape says otherwise.
//
// Engines: bbolt-{array,hashmap}-{synced,nosync}: the freelist type × whether the freelist is
// written at commit (NoFreelistSync). Modes: "sync" (bbolt's default: fdatasync at commit),
// "no_sync" (DB.NoSync); reads use the durable settings; reopen runs in both modes.
//
// group_commit (ids group_commit/ENGINE/wN, N = 4, 16, 64): N goroutines share one pre-filled
// database (durable settings) and each commits one-key puts of new keys, its own contiguous
// range above the pre-fill, through DB.Batch (bbolt's group commit, default MaxBatchSize 1000
// and MaxBatchDelay 10 ms). The figure is µs per committed put: the wall time from the moment
// every goroutine is released until the last put has committed, divided by the puts; its
// inverse is the durable throughput.
//
// Measurement, close to criterion's: warm up for -warmup, then -samples samples of equal
// iteration counts sized to fill -measure; the figure is the median of the samples' mean
// time per iteration. Output on stdout, one JSON object per benchmark:
//
//	{"id":"set/bbolt-array-synced/no_sync","median_ns":12345.6,"samples":20,"iters_per_sample":40}
//
// Progress goes to stderr.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

const (
	keySize          = 16
	valueSize        = 100
	prefill          = 10000
	fillBatch        = 1000
	batch            = 100
	stride           = 7919
	largeValues      = 2000
	largeValueSize   = 1 << 20
	largeFillBatch   = 20
	largeDeleteBatch = 500
	largeSetBase     = 1 << 40
	largeSetStride   = 1 << 32
)

var (
	bucket = []byte("bench")
	value  = make([]byte, valueSize)
)

func init() {
	for i := range value {
		value[i] = 0x5a
	}
}

// key is counter n as 16 big-endian bytes.
func key(n uint64) []byte {
	k := make([]byte, keySize)
	binary.BigEndian.PutUint64(k[8:], n)
	return k
}

// scattered is the pre-filled key read by read number i.
func scattered(i uint64) uint64 { return (i % prefill) * stride % prefill }

type engine struct {
	name           string
	freelist       bolt.FreelistType
	noFreelistSync bool
	measuresReads  bool
}

var engines = []engine{
	{"bbolt-array-synced", bolt.FreelistArrayType, false, true},
	{"bbolt-array-nosync", bolt.FreelistArrayType, true, false},
	{"bbolt-hashmap-synced", bolt.FreelistMapType, false, false},
	{"bbolt-hashmap-nosync", bolt.FreelistMapType, true, false},
}

var modes = []string{"sync", "no_sync"}

// writeModes are the modes the set, set100 and delete groups run: all of them unless -modes
// keeps some.
var writeModes = modes

func (e engine) open(path string, mode string) *bolt.DB {
	opts := &bolt.Options{
		Timeout:        time.Second,
		NoSync:         mode == "no_sync",
		NoFreelistSync: e.noFreelistSync,
		FreelistType:   e.freelist,
	}
	db, err := bolt.Open(path, 0o600, opts)
	must(err, "open %s", path)
	// Only a new database commits at open, so that reopening measures the open alone.
	exists := false
	must(db.View(func(tx *bolt.Tx) error {
		exists = tx.Bucket(bucket) != nil
		return nil
	}), "look up bucket")
	if !exists {
		must(db.Update(func(tx *bolt.Tx) error {
			_, err := tx.CreateBucket(bucket)
			return err
		}), "create bucket")
	}
	return db
}

func must(err error, what string, args ...interface{}) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %s: %v\n", fmt.Sprintf(what, args...), err)
		os.Exit(1)
	}
}

func put(db *bolt.DB, from, to uint64, v []byte) {
	must(db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		for n := from; n < to; n++ {
			if err := b.Put(key(n), v); err != nil {
				return err
			}
		}
		return nil
	}), "put %d..%d", from, to)
}

// sink keeps the bytes get_value reads from being optimised away.
var sink byte

// get gets the pre-filled keys of read numbers from..to in one read transaction; with
// readValue it also reads each value's last byte (get_value), as a caller using it would.
func get(db *bolt.DB, from, to uint64, readValue bool) {
	must(db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		for i := from; i < to; i++ {
			v := b.Get(key(scattered(i)))
			if v == nil {
				return fmt.Errorf("read %d found no value", i)
			}
			if readValue {
				sink ^= v[len(v)-1]
			}
		}
		return nil
	}), "get %d..%d", from, to)
}

func del(db *bolt.DB, from, to uint64) {
	must(db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		for n := from; n < to; n++ {
			if b.Get(key(n)) == nil {
				return fmt.Errorf("key %d missing", n)
			}
			if err := b.Delete(key(n)); err != nil {
				return err
			}
		}
		return nil
	}), "delete %d..%d", from, to)
}

func fill(db *bolt.DB, from, to uint64) {
	for s := from; s < to; s += fillBatch {
		e := s + fillBatch
		if e > to {
			e = to
		}
		put(db, s, e, value)
	}
}

// refillForDeletes prepares n deletes from the left edge, key next on, where keys
// next..*filled are present: it appends keys up to next+n+prefill, so that 10,000 remain after
// the deletes (bench/src/prefill.rs does the same for the Rust engines).
func refillForDeletes(db *bolt.DB, next, n uint64, filled *uint64) {
	want := next + n + prefill
	fill(db, *filled, want)
	*filled = want
}

// Measurement settings, from the flags.
var (
	warmup  time.Duration
	measure time.Duration
	samples int
)

// Samples of the large-DB groups, as in peers.rs (each iteration can take milliseconds).
const largeSamples = 10

// run measures a routine that performs iters iterations and returns the time they took.
func run(id string, routine func(iters uint64) time.Duration) {
	runN(id, samples, routine)
}

func runN(id string, samples int, routine func(iters uint64) time.Duration) {
	// Double the iterations until the warm-up time is spent; the last (largest) round, the
	// least disturbed by start-up effects, estimates the time per iteration.
	var warmTime, last time.Duration
	var lastIters uint64
	for n := uint64(1); warmTime < warmup; n *= 2 {
		last = routine(n)
		warmTime += last
		lastIters = n
	}
	perIter := float64(last) / float64(lastIters)
	iters := uint64(float64(measure) / float64(samples) / perIter)
	if iters == 0 {
		iters = 1
	}
	means := make([]float64, samples)
	for s := range means {
		means[s] = float64(routine(iters)) / float64(iters)
	}
	sort.Float64s(means)
	median := means[samples/2]
	if samples%2 == 0 {
		median = (means[samples/2-1] + means[samples/2]) / 2
	}
	out, _ := json.Marshal(map[string]interface{}{
		"id": id, "median_ns": median, "samples": samples, "iters_per_sample": iters,
	})
	fmt.Println(string(out))
	fmt.Fprintf(os.Stderr, "%-40s %12.2f us/op  (%d x %d iters)\n", id, median/1e3, samples, iters)
}

// simple turns an operation on iteration number i into a timed routine.
func simple(op func(i uint64)) func(uint64) time.Duration {
	var i uint64
	return func(iters uint64) time.Duration {
		start := time.Now()
		for end := i + iters; i < end; i++ {
			op(i)
		}
		return time.Since(start)
	}
}

func tempDir() string {
	dir, err := os.MkdirTemp("", "bbolt-bench")
	must(err, "temp dir")
	return dir
}

func openFilled(e engine, mode string) (*bolt.DB, string) {
	dir := tempDir()
	db := e.open(filepath.Join(dir, "bench.db"), mode)
	fill(db, 0, prefill)
	return db, dir
}

func benchReads(sel func(string, string) bool, group string, op func(db *bolt.DB, i uint64)) {
	for _, e := range engines {
		if !e.measuresReads || !sel(group, e.name) {
			continue
		}
		db, dir := openFilled(e, "sync")
		run(group+"/"+e.name+"/read", simple(func(i uint64) { op(db, i) }))
		must(db.Close(), "close")
		os.RemoveAll(dir)
	}
}

// settle measures op once on a throwaway no_sync database of engine e, under the id
// group/settle/e (the joined table leaves it out), before a write group's first benchmark: on
// this machine the first heavy writer after a quiet spell runs a quarter slower for the whole
// of its measurement, whatever it is, and a group always starts with the same engine (peers.rs
// does the same; BENCHMARKS.md has the figures).
func settle(group string, e engine, op func(db *bolt.DB, i uint64)) {
	db, dir := openFilled(e, "no_sync")
	run(group+"/settle/"+e.name, simple(func(i uint64) { op(db, i) }))
	must(db.Close(), "close")
	os.RemoveAll(dir)
}

func benchWrites(sel func(string, string) bool, group string, op func(db *bolt.DB, i uint64)) {
	for _, e := range engines {
		if sel(group, e.name) {
			settle(group, e, op)
			break
		}
	}
	for _, e := range engines {
		if !sel(group, e.name) {
			continue
		}
		for _, mode := range writeModes {
			db, dir := openFilled(e, mode)
			run(group+"/"+e.name+"/"+mode, simple(func(i uint64) { op(db, i) }))
			must(db.Close(), "close")
			os.RemoveAll(dir)
		}
	}
}

// benchDelete deletes from the left edge in key order; before each timed batch an untimed
// refill keeps 10,000 keys after it, as peers.rs does.
func benchDelete(sel func(string, string) bool) {
	for _, e := range engines {
		if !sel("delete", e.name) {
			continue
		}
		for _, mode := range writeModes {
			db, dir := openFilled(e, mode)
			next, filled := uint64(0), uint64(prefill)
			run("delete/"+e.name+"/"+mode, func(iters uint64) time.Duration {
				refillForDeletes(db, next, iters, &filled)
				start := time.Now()
				for n := next; n < next+iters; n++ {
					del(db, n, n+1)
				}
				next += iters
				return time.Since(start)
			})
			must(db.Close(), "close")
			os.RemoveAll(dir)
		}
	}
}

// benchLarge builds one large template and runs large_set and reopen for every configuration
// on it in turn (each first commit puts the file in that configuration's steady state).
func benchLarge(sel func(string, string) bool) {
	wantSet := func(e engine) bool { return sel("large_set", e.name) }
	wantReopen := func(e engine) bool { return sel("reopen", e.name) }
	any := false
	for _, e := range engines {
		any = any || wantSet(e) || wantReopen(e)
	}
	if !any {
		return
	}
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bench.db")
	buildTemplate(path)
	// Reopens first, while the tree is the template's: as in peers.rs, one Set in the
	// configuration makes the file's last commit its own, and a freelist that is not synced is
	// then rebuilt by walking a tree of a few pages, not of the keys the Sets add.
	runNo := uint64(0)
	for _, e := range engines {
		if wantReopen(e) {
			db := e.open(path, "no_sync")
			base := uint64(largeSetBase) + runNo*largeSetStride
			put(db, base, base+1, value)
			must(db.Close(), "close")
			runNo++
			for _, mode := range modes {
				mode := mode
				runN("reopen/"+e.name+"/"+mode, largeSamples, simple(func(uint64) {
					must(e.open(path, mode).Close(), "close")
				}))
			}
		}
	}
	for _, e := range engines {
		if wantSet(e) {
			// Each configuration starts from a cold file, as the first did.
			coldFile(path)
			for _, mode := range modes {
				db := e.open(path, mode)
				base := uint64(largeSetBase) + runNo*largeSetStride
				runN("large_set/"+e.name+"/"+mode, largeSamples, simple(func(i uint64) { put(db, base+i, base+i+1, value) }))
				must(db.Close(), "close")
				runNo++
			}
		}
	}
}

// buildTemplate writes the large-DB template at path: 2,000 values of 1 MiB put, 20 per
// transaction, then all deleted, 500 per transaction, in bbolt's default configuration.
func buildTemplate(path string) {
	start := time.Now()
	db := engines[0].open(path, "no_sync")
	big := make([]byte, largeValueSize)
	for i := range big {
		big[i] = 0xa5
	}
	for s := uint64(0); s < largeValues; s += largeFillBatch {
		put(db, s, s+largeFillBatch, big)
	}
	for s := uint64(0); s < largeValues; s += largeDeleteBatch {
		del(db, s, s+largeDeleteBatch)
	}
	must(db.Close(), "close template")
	// Write the template back now, so that the kernel is not still flushing it while the Sets
	// on it are measured, and leave it out of the page cache, as after a restart (peers.rs does
	// the same: see evictFromOSCache).
	coldFile(path)
	fmt.Fprintf(os.Stderr, "large template for bbolt: built in %v\n", time.Since(start))
}

// Writer counts of group_commit, as in peers.rs.
var writerCounts = []uint64{4, 16, 64}

// Samples of group_commit, as in peers.rs (each put waits for a durable commit).
const groupSamples = 10

// benchGroupCommit runs group_commit for every configuration: one database each, the writer
// counts in turn on it.
func benchGroupCommit(sel func(string, string) bool) {
	for _, e := range engines {
		if !sel("group_commit", e.name) {
			continue
		}
		db, dir := openFilled(e, "sync")
		next := uint64(prefill)
		groupCommitRows(db, e.name, &next)
		// The two default configurations again with no batch delay, as in peers.rs.
		if e.name == "bbolt-array-synced" || e.name == "bbolt-hashmap-nosync" {
			db.MaxBatchDelay = 0
			groupCommitRows(db, e.name+"-nodelay", &next)
		}
		must(db.Close(), "close")
		os.RemoveAll(dir)
	}
}

// groupCommitRows runs group_commit/NAME/wN for every writer count on db, keys from *next on.
func groupCommitRows(db *bolt.DB, name string, next *uint64) {
	for _, writers := range writerCounts {
		writers := writers
		runN(fmt.Sprintf("group_commit/%s/w%d", name, writers), groupSamples,
			func(puts uint64) time.Duration {
				elapsed := concurrentPuts(db, *next, puts, writers)
				*next += puts
				return elapsed
			})
	}
}

// concurrentPuts puts keys first..first+puts from writers goroutines, each a contiguous share,
// each put its own DB.Batch call, and returns the time from their release until the last put
// has committed.
func concurrentPuts(db *bolt.DB, first, puts, writers uint64) time.Duration {
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	for t := uint64(0); t < writers; t++ {
		lo, hi := first+puts*t/writers, first+puts*(t+1)/writers
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-release
			for n := lo; n < hi; n++ {
				n := n
				must(db.Batch(func(tx *bolt.Tx) error {
					return tx.Bucket(bucket).Put(key(n), value)
				}), "batch put %d", n)
			}
		}()
	}
	ready.Wait()
	start := time.Now()
	close(release)
	done.Wait()
	return time.Since(start)
}

func main() {
	enginesFlag := flag.String("engines", "", "comma-separated engine names (default: all)")
	groupsFlag := flag.String("groups", "", "comma-separated groups (default: all)")
	modesFlag := flag.String("modes", "", "comma-separated modes of set, set100 and delete (default: all)")
	flag.DurationVar(&warmup, "warmup", time.Second, "warm-up time per benchmark")
	flag.DurationVar(&measure, "measure", 3*time.Second, "measurement time per benchmark")
	flag.IntVar(&samples, "samples", 20, "samples per benchmark")
	count := flag.String("count", "", "ENGINE/SHAPE/MODE: run that shape -n times untimed and exit "+
		"(for valgrind --tool=cachegrind; shapes get, get100, get_value, set, set100, delete)")
	countN := flag.Uint64("n", 0, "operations for -count")
	serveSpec := flag.String("serve", "", "ENGINE/SHAPE/MODE: run blocks of that shape on request "+
		"(shapes set, set100, delete, large_set): read a count per line on stdin, run that many "+
		"operations, print their time in nanoseconds; exit at end of input")
	flag.Parse()
	if *count != "" {
		countOps(*count, *countN)
		return
	}
	if *serveSpec != "" {
		serve(*serveSpec)
		return
	}
	in := func(list, name string) bool {
		if list == "" {
			return true
		}
		for _, s := range strings.Split(list, ",") {
			if strings.TrimSpace(s) == name {
				return true
			}
		}
		return false
	}
	sel := func(group, name string) bool { return in(*groupsFlag, group) && in(*enginesFlag, name) }
	writeModes = nil
	for _, m := range modes {
		if in(*modesFlag, m) {
			writeModes = append(writeModes, m)
		}
	}

	benchReads(sel, "get", func(db *bolt.DB, i uint64) { get(db, i, i+1, false) })
	benchReads(sel, "get100", func(db *bolt.DB, i uint64) { get(db, i*batch, (i+1)*batch, false) })
	benchReads(sel, "get_value", func(db *bolt.DB, i uint64) { get(db, i, i+1, true) })
	benchWrites(sel, "set", func(db *bolt.DB, i uint64) { put(db, prefill+i, prefill+i+1, value) })
	benchWrites(sel, "set100", func(db *bolt.DB, i uint64) {
		put(db, prefill+i*batch, prefill+(i+1)*batch, value)
	})
	benchDelete(sel)
	benchLarge(sel)
	benchGroupCommit(sel)
}

// usage reports a bad -count or -serve argument and exits with status 2.
func usage(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(2)
}

// parseSpec splits ENGINE/SHAPE/MODE, checking the engine, the mode and that the shape is one
// of `shapes`.
func parseSpec(flagName, spec string, shapes ...string) (engine, string, string) {
	parts := strings.Split(spec, "/")
	if len(parts) != 3 {
		usage("-%s %q: expected ENGINE/SHAPE/MODE", flagName, spec)
	}
	var names []string
	for _, e := range engines {
		if e.name == parts[0] {
			return e, checkedShape(flagName, spec, parts[1], shapes), checkedMode(flagName, spec, parts[2])
		}
		names = append(names, e.name)
	}
	usage("-%s %q: no engine %q; expected one of %s", flagName, spec, parts[0], strings.Join(names, ", "))
	panic("unreachable")
}

func checkedShape(flagName, spec, shape string, shapes []string) string {
	for _, s := range shapes {
		if s == shape {
			return shape
		}
	}
	usage("-%s %q: no shape %q; expected one of %s", flagName, spec, shape, strings.Join(shapes, ", "))
	panic("unreachable")
}

func checkedMode(flagName, spec, mode string) string {
	for _, m := range modes {
		if m == mode {
			return mode
		}
	}
	usage("-%s %q: no mode %q; expected one of %s", flagName, spec, mode, strings.Join(modes, ", "))
	panic("unreachable")
}

// writeOp is operation number i of a write shape, as peers.rs and interleaved.rs number them:
// every Set and Set100 puts fresh keys above the pre-fill, every large-DB Set above the large
// values' keys; Delete i deletes key i (the caller refills at the right edge).
func writeOp(shape string) func(db *bolt.DB, i uint64) {
	switch shape {
	case "large_set":
		return func(db *bolt.DB, i uint64) { put(db, largeSetBase+i, largeSetBase+i+1, value) }
	case "set":
		return func(db *bolt.DB, i uint64) { put(db, prefill+i, prefill+i+1, value) }
	case "set100":
		return func(db *bolt.DB, i uint64) { put(db, prefill+i*batch, prefill+(i+1)*batch, value) }
	default:
		return func(db *bolt.DB, i uint64) { del(db, i, i+1) }
	}
}

// countOps runs one shape n times with no timing, as bench/examples/instructions.rs does for
// the Rust engines: instructions per operation = (count at n − count at 0) / n. For delete,
// every 1,000 deletes from the left edge follow a refill of 1,000 keys at the right edge.
func countOps(spec string, n uint64) {
	e, shape, mode := parseSpec("count", spec, "get", "get100", "get_value", "set", "set100", "delete")
	db, dir := openFilled(e, mode)
	defer os.RemoveAll(dir)
	write := writeOp(shape) // looked up once, so that the counts hold the operations alone
	for i := uint64(0); i < n; i++ {
		switch shape {
		case "get":
			get(db, i, i+1, false)
		case "get100":
			get(db, i*batch, (i+1)*batch, false)
		case "get_value":
			get(db, i, i+1, true)
		case "delete":
			if i%fillBatch == 0 {
				fill(db, prefill+i, prefill+i+fillBatch)
			}
			del(db, i, i+1)
		default:
			write(db, i)
		}
	}
	must(db.Close(), "close")
}

// Most operations one -serve block may ask for.
const maxBlock = 1000000

// serve runs blocks of one write shape on one database, on request, for
// bench/benches/interleaved.rs: each line of stdin is a count N; serve runs the next N
// operations and prints the nanoseconds they took, one line, flushed. Set, Set100 and Delete run
// on a pre-filled database; large_set on a large-DB template built as benchLarge builds it,
// written back and left out of the page cache. A delete block first refills, untimed, as many
// keys as it will delete, so that 10,000 remain after it (as benchDelete and interleaved.rs do).
// The process exits when stdin ends. Only the operations are timed, so the pipe's round trip is
// in neither side's figure.
func serve(spec string) {
	e, shape, mode := parseSpec("serve", spec, "set", "set100", "delete", "large_set")
	op := writeOp(shape)
	var db *bolt.DB
	var dir string
	if shape == "large_set" {
		dir = tempDir()
		path := filepath.Join(dir, "bench.db")
		buildTemplate(path)
		db = e.open(path, mode)
	} else {
		db, dir = openFilled(e, mode)
	}
	defer os.RemoveAll(dir)
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	next, filled := uint64(0), uint64(prefill)
	for line := 1; in.Scan(); line++ {
		n, err := strconv.ParseUint(strings.TrimSpace(in.Text()), 10, 64)
		if err != nil || n == 0 || n > maxBlock {
			usage("-serve: stdin line %d: %q: expected a count from 1 to %d", line, in.Text(), maxBlock)
		}
		if shape == "delete" {
			refillForDeletes(db, next, n, &filled)
		}
		start := time.Now()
		for i := next; i < next+n; i++ {
			op(db, i)
		}
		elapsed := time.Since(start)
		next += n
		fmt.Fprintln(out, elapsed.Nanoseconds())
		must(out.Flush(), "write to stdout")
	}
	must(in.Err(), "read stdin")
	must(db.Close(), "close")
}

// coldFile writes every dirty page of the machine back (sync(2)) and then leaves the file at path
// out of the page cache (posix_fadvise DONTNEED), as it would be after a restart. Without it the
// large template's 1 MiB writes leave the file in large page-cache folios, and ext4's buffered
// write then walks every block of the large folio a 4 KiB page lands in: the Sets would measure
// the kernel's leftovers from building the template (bench/src/large.rs says the same).
func coldFile(path string) {
	syscall.Sync()
	f, err := os.Open(path)
	must(err, "open the template")
	defer f.Close()
	must(unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED), "posix_fadvise the template")
}
