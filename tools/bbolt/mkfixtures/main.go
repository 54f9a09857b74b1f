// Command mkfixtures writes crashlab's bbolt fixture databases with bbolt itself
// (go.etcd.io/bbolt 1.3.6 from Debian) so that crashlab's Rust engine can be tested
// against files produced by the reference implementation.
//
// Usage: mkfixtures OUTDIR
//
// For every fixture NAME it writes OUTDIR/NAME.db and OUTDIR/NAME.json. The JSON is
// built from this program's own record of every operation it performed (puts,
// overwrites, deletes, bucket creation/deletion, sequences) — the .db file is never
// read back to produce it. Format:
//
//	{"page_size": N,
//	 "buckets":   {PATH: {KEY: VALUE, ...}, ...},
//	 "sequences": {PATH: N, ...}}
//
// KEY and VALUE are lower-case hex; PATH is the hex of each bucket name from the top
// level down joined by "/". Every bucket is listed (an empty one as {}), a sub-bucket
// is not listed as a KEY of its parent, and only non-zero sequences are listed.
//
// Content is deterministic (fixed patterns and math/rand with fixed seeds; the array
// freelist, which allocates the lowest free page deterministically). Every DB is
// created with an explicit PageSize so the files do not depend on the host's page size.
// The .json files are reproducible byte for byte; the .db files are not (bbolt spills
// sibling sub-buckets in Go map order, so page numbers vary between runs).
//
// Fixtures and what they exercise:
//
//   - nested.db (4096-byte pages): several top-level buckets (one with a binary name),
//     buckets nested 4 deep, a bucket of 1200 keys and one of 1500 ~100-byte keys
//     (many leaf pages, a branch level, and for "deep" two branch levels), binary
//     keys containing 0x00 and 0xff, empty values, NextSequence called 4 times and
//     SetSequence(2^40+7), overwrites, deletes, a deleted sub-tree, and several
//     transactions across a close/reopen.
//   - inline.db (4096-byte pages, inline limit 1024 bytes): inline buckets, an empty
//     bucket, a bucket holding only an empty value, one at exactly the inline limit
//     (inline) and one a byte over (own leaf page), a parent (paged, since it has
//     sub-buckets) holding inline children, an inline bucket with a non-zero sequence,
//     a bucket that grows from inline to paged and one that shrinks from paged back
//     to inline.
//   - overflow.db (4096-byte pages): values from 1 byte to 200 KiB (overflow pages),
//     keys of exactly MaxKeySize = 32768 bytes (a 32769-byte key is rejected and not
//     stored), and 6 such keys in one bucket so a branch page overflows too.
//   - freelist.db (4096-byte pages): grown to ~8 MB with compressible values, then
//     ~95% of the keys deleted in scattered order, so the freelist page (itself
//     spanning several pages) holds a couple of thousand fragmented free ids.
//   - nofreelist.db (4096-byte pages, NoFreelistSync): grown then partly deleted; the
//     meta pages' freelist field is 0xFFFFFFFFFFFFFFFF (asserted after close), so a
//     reader must rebuild the freelist by scanning.
//   - pagesize1k.db (PageSize 1024): branch levels, overflow values, inline buckets
//     (limit 256 bytes) and nesting with tiny pages.
//   - pagesize64k.db (PageSize 65536): multiple 64 KiB leaves, an inline bucket of
//     ~10 KB (limit 16384 bytes), a 140000-byte value spanning 3 pages, and nesting.
//
// `mkfixtures -escaped OUTDIR` writes one more, not committed (about 90 MB):
//
//   - escaped.db (PageSize 1024): a 72 MiB value put and deleted, then one more small
//     transaction, so the freelist bbolt writes lists more than 0xFFFF ids and uses
//     bbolt's count escape (the page header's 16-bit count reads 0xFFFF and the first
//     element holds the real count; asserted after close).
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// expected is the JSON document written next to each fixture.
type expected struct {
	PageSize  int                          `json:"page_size"`
	Buckets   map[string]map[string]string `json:"buckets"`
	Sequences map[string]uint64            `json:"sequences"`
}

// fixture couples an open bbolt DB with our record of what it should contain.
type fixture struct {
	name string
	path string
	opts bolt.Options
	db   *bolt.DB
	rec  expected
}

// must aborts the program on any error: fixture generation has no partial success.
func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "mkfixtures: %s: %v\n", what, err)
		os.Exit(1)
	}
}

// hexPath encodes a bucket path the way the JSON does.
func hexPath(names [][]byte) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = hex.EncodeToString(n)
	}
	return strings.Join(parts, "/")
}

// p builds a bucket path from strings (for readability at call sites).
func p(names ...string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = []byte(n)
	}
	return out
}

// newFixture creates OUTDIR/NAME.db from scratch (removing any old file) and opens it.
func newFixture(outDir, name string, opts bolt.Options) *fixture {
	f := &fixture{
		name: name,
		path: filepath.Join(outDir, name+".db"),
		opts: opts,
		rec: expected{
			PageSize:  opts.PageSize,
			Buckets:   map[string]map[string]string{},
			Sequences: map[string]uint64{},
		},
	}
	if err := os.Remove(f.path); err != nil && !os.IsNotExist(err) {
		must(err, "remove old "+f.path)
	}
	f.open()
	return f
}

func (f *fixture) open() {
	opts := f.opts // copy: bbolt does not modify it, but keep ours pristine
	db, err := bolt.Open(f.path, 0644, &opts)
	must(err, "open "+f.path)
	f.db = db
}

// reopen closes and reopens the DB so later transactions start from the file.
func (f *fixture) reopen() {
	must(f.db.Close(), "close "+f.path)
	f.open()
}

// update runs fn in one read-write transaction; any error aborts the program.
func (f *fixture) update(fn func(w *writer)) {
	must(f.db.Update(func(tx *bolt.Tx) error {
		fn(&writer{tx: tx, rec: &f.rec})
		return nil
	}), "update "+f.name)
}

// finish closes the DB and writes NAME.json from the record.
func (f *fixture) finish() {
	must(f.db.Close(), "close "+f.path)
	f.db = nil
	data, err := json.MarshalIndent(&f.rec, "", " ")
	must(err, "marshal "+f.name)
	data = append(data, '\n')
	jsonPath := strings.TrimSuffix(f.path, ".db") + ".json"
	must(os.WriteFile(jsonPath, data, 0644), "write "+jsonPath)
	fmt.Printf("mkfixtures: wrote %s (%d buckets)\n", f.path, len(f.rec.Buckets))
}

// writer performs bbolt operations inside a transaction and records each one.
type writer struct {
	tx  *bolt.Tx
	rec *expected
}

// bucket returns the existing bucket at path, aborting if it does not exist.
func (w *writer) bucket(path [][]byte) *bolt.Bucket {
	b := w.tx.Bucket(path[0])
	for _, n := range path[1:] {
		if b == nil {
			break
		}
		b = b.Bucket(n)
	}
	if b == nil {
		must(fmt.Errorf("no bucket %s", hexPath(path)), "bucket")
	}
	return b
}

// mkdir creates every bucket along path that does not exist yet.
func (w *writer) mkdir(path [][]byte) {
	var b *bolt.Bucket
	for i, n := range path {
		var err error
		if i == 0 {
			b, err = w.tx.CreateBucketIfNotExists(n)
		} else {
			b, err = b.CreateBucketIfNotExists(n)
		}
		must(err, "create bucket "+hexPath(path[:i+1]))
		hp := hexPath(path[:i+1])
		if _, ok := w.rec.Buckets[hp]; !ok {
			w.rec.Buckets[hp] = map[string]string{}
		}
	}
}

// put stores key=value in the bucket at path (creating the path if needed).
func (w *writer) put(path [][]byte, key, value []byte) {
	w.mkdir(path)
	must(w.bucket(path).Put(key, value), fmt.Sprintf("put %s %x", hexPath(path), key))
	w.rec.Buckets[hexPath(path)][hex.EncodeToString(key)] = hex.EncodeToString(value)
}

// del deletes key from the bucket at path.
func (w *writer) del(path [][]byte, key []byte) {
	must(w.bucket(path).Delete(key), fmt.Sprintf("delete %s %x", hexPath(path), key))
	delete(w.rec.Buckets[hexPath(path)], hex.EncodeToString(key))
}

// rmdir deletes the bucket at path with everything below it.
func (w *writer) rmdir(path [][]byte) {
	last := path[len(path)-1]
	if len(path) == 1 {
		must(w.tx.DeleteBucket(last), "delete bucket "+hexPath(path))
	} else {
		must(w.bucket(path[:len(path)-1]).DeleteBucket(last), "delete bucket "+hexPath(path))
	}
	hp := hexPath(path)
	for k := range w.rec.Buckets {
		if k == hp || strings.HasPrefix(k, hp+"/") {
			delete(w.rec.Buckets, k)
			delete(w.rec.Sequences, k)
		}
	}
}

// nextSeq calls NextSequence on the bucket at path and records the new value.
func (w *writer) nextSeq(path [][]byte) {
	w.mkdir(path)
	s, err := w.bucket(path).NextSequence()
	must(err, "NextSequence "+hexPath(path))
	w.rec.Sequences[hexPath(path)] = s
}

// setSeq calls SetSequence on the bucket at path and records it.
func (w *writer) setSeq(path [][]byte, s uint64) {
	w.mkdir(path)
	must(w.bucket(path).SetSequence(s), "SetSequence "+hexPath(path))
	if s == 0 {
		delete(w.rec.Sequences, hexPath(path))
	} else {
		w.rec.Sequences[hexPath(path)] = s
	}
}

// pattern returns n bytes of a cheap, compressible, seed-dependent pattern.
func pattern(seed, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte((seed*31 + i) % 251)
	}
	return out
}

// text returns n bytes repeating a short ASCII stamp (very compressible).
func text(stamp string, n int) []byte {
	if n == 0 {
		return []byte{}
	}
	return bytes.Repeat([]byte(stamp), n/len(stamp)+1)[:n]
}

// be64 encodes i as 8 big-endian bytes (sorts numerically as a bbolt key).
func be64(i uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], i)
	return b[:]
}

func nestedDB(outDir string) {
	f := newFixture(outDir, "nested", bolt.Options{PageSize: 4096})
	binName := []byte{0x00, 0xff, 'b', 'i', 'n'}

	f.update(func(w *writer) {
		// alpha: a few keys at each of 4 nesting levels, empty values, sequences.
		for i := 0; i < 20; i++ {
			w.put(p("alpha"), []byte(fmt.Sprintf("a%02d", i)), []byte(fmt.Sprintf("value-%d", i)))
		}
		w.put(p("alpha"), []byte("empty1"), []byte{})
		w.put(p("alpha"), []byte("empty2"), nil) // nil is stored as an empty value
		for i := 0; i < 10; i++ {
			w.put(p("alpha", "level2"), []byte(fmt.Sprintf("l2-%d", i)), pattern(i, 40))
			w.put(p("alpha", "level2", "level3"), []byte{byte(i), 0x00, 0xff}, pattern(i+100, i))
			w.put(p("alpha", "level2", "level3", "level4"), []byte(fmt.Sprintf("l4-%d", i)), []byte{})
		}
		for i := 0; i < 3; i++ {
			w.nextSeq(p("alpha", "level2"))
		}
		for i := 0; i < 5; i++ {
			w.nextSeq(p("alpha", "level2", "level3"))
		}

		// beta: 1200 keys -> many leaf pages under a branch page.
		for i := 0; i < 1200; i++ {
			w.put(p("beta"), []byte(fmt.Sprintf("key-%06d", i)), pattern(i, 30))
		}

		// deep: 1200 keys of 100 bytes -> fat branch elements, two branch levels.
		for i := 0; i < 1200; i++ {
			k := append([]byte(fmt.Sprintf("k%08d-", i)), text("filler/", 90)...)
			w.put(p("deep"), k, []byte(fmt.Sprintf("d%d", i)))
		}

		// A bucket with a binary name and binary keys, including edge bytes.
		edge := [][]byte{{0x00}, {0x00, 0x00}, {0x00, 0xff}, {0x01}, {0x7f}, {0x80},
			{0xfe, 0xff}, {0xff}, {0xff, 0x00}, {0xff, 0xff}, {0xff, 0xff, 0xff, 0xff}}
		for i, k := range edge {
			w.put([][]byte{binName}, k, pattern(i, i*3))
		}
		rng := rand.New(rand.NewSource(1))
		for i := 0; i < 300; i++ {
			k := make([]byte, 1+rng.Intn(40))
			rng.Read(k)
			v := make([]byte, rng.Intn(120))
			rng.Read(v)
			w.put([][]byte{binName}, k, v)
		}

		// gamma: sub-buckets only, one of them large, one with a binary name.
		for i := 0; i < 1000; i++ {
			w.put(p("gamma", "g1"), be64(uint64(i)*7919), pattern(i, 20))
		}
		w.put(p("gamma", "g2"), []byte("only"), []byte("small"))
		w.put([][]byte{[]byte("gamma"), {0xff}}, []byte{0x00}, []byte{0xff})
		w.setSeq(p("gamma"), 1<<40+7)

		// temp: a subtree deleted in the next transaction.
		for i := 0; i < 300; i++ {
			w.put(p("temp", "sub"), []byte(fmt.Sprintf("t%04d", i)), pattern(i, 50))
		}
		w.put(p("temp"), []byte("x"), []byte("y"))
	})

	f.reopen()

	f.update(func(w *writer) {
		w.rmdir(p("temp"))
		for i := 0; i < 1200; i += 7 {
			w.del(p("beta"), []byte(fmt.Sprintf("key-%06d", i)))
		}
		for i := 3; i < 1200; i += 11 {
			if i%7 != 0 {
				w.put(p("beta"), []byte(fmt.Sprintf("key-%06d", i)), []byte("overwritten"))
			}
		}
		w.nextSeq(p("alpha", "level2")) // now 4
		w.put(p("alpha"), []byte("a05"), []byte{})
		w.del(p("alpha"), []byte("a06"))
		w.mkdir(p("epsilon")) // an empty top-level bucket
	})

	f.update(func(w *writer) {
		// Insert in the middle of "deep" to split pages after a reopen.
		for i := 0; i < 300; i++ {
			k := append([]byte(fmt.Sprintf("k%08d+", i*5)), text("more/", 60)...)
			w.put(p("deep"), k, []byte{})
		}
	})
	f.finish()
}

func inlineDB(outDir string) {
	f := newFixture(outDir, "inline", bolt.Options{PageSize: 4096})
	// Inline limit for 4096-byte pages: 16 (page header) + sum(16 + len(k) + len(v)) <= 1024.
	f.update(func(w *writer) {
		w.put(p("small"), []byte("a"), []byte("1"))
		w.put(p("small"), []byte("b"), []byte("22"))
		w.put(p("small"), []byte("c"), []byte("333"))
		w.nextSeq(p("small"))
		w.nextSeq(p("small")) // inline bucket with sequence 2

		w.mkdir(p("empty"))
		w.put(p("emptyval"), []byte("k"), []byte{})

		// 16 + (16 + 1 + 991) = 1024: exactly at the limit, stays inline.
		w.put(p("at_limit"), []byte("k"), pattern(1, 991))
		// 16 + (16 + 1 + 992) = 1025: one byte over, gets its own leaf page.
		w.put(p("over_limit"), []byte("k"), pattern(2, 992))

		// 16 + 20*(16 + 3 + 10) = 596: many small keys, inline.
		for i := 0; i < 20; i++ {
			w.put(p("many_small"), []byte(fmt.Sprintf("m%02d", i)), pattern(i, 10))
		}

		// A parent with sub-buckets is never inline; its children are.
		w.put(p("parent"), []byte("key"), []byte("val"))
		w.put(p("parent", "child1"), []byte("x"), []byte("1"))
		w.put(p("parent", "child1"), []byte("y"), []byte{})
		w.mkdir(p("parent", "child2"))
		w.put([][]byte{[]byte("parent"), {0x00, 0xff}}, []byte{0xff}, []byte{0x00})

		w.put(p("grow"), []byte("g0"), []byte("small"))
		for i := 0; i < 40; i++ {
			w.put(p("shrink"), []byte(fmt.Sprintf("s%02d", i)), pattern(i, 100))
		}
	})
	f.reopen()
	f.update(func(w *writer) {
		// grow: inline -> paged. shrink: paged -> inline.
		for i := 1; i < 40; i++ {
			w.put(p("grow"), []byte(fmt.Sprintf("g%02d", i)), pattern(i, 100))
		}
		for i := 2; i < 40; i++ {
			w.del(p("shrink"), []byte(fmt.Sprintf("s%02d", i)))
		}
	})
	f.finish()
}

func overflowDB(outDir string) {
	f := newFixture(outDir, "overflow", bolt.Options{PageSize: 4096})
	sizes := []int{1, 2, 15, 100, 1000, 2000, 4000, 4048, 4064, 4080, 4096, 4097,
		8192, 12000, 12288, 40000, 65536, 204800}
	f.update(func(w *writer) {
		for i, n := range sizes {
			w.put(p("values"), []byte(fmt.Sprintf("v%08d", n)), pattern(i, n))
		}
	})
	f.update(func(w *writer) {
		// A key of exactly MaxKeySize, with a small and (in another bucket) a big value.
		w.put(p("maxkey"), text("K", bolt.MaxKeySize), []byte("max"))
		w.put(p("maxkey_bigval"), text("L", bolt.MaxKeySize), pattern(7, 20000))
		// One byte more must be rejected by bbolt (and is not recorded).
		w.mkdir(p("maxkey"))
		if err := w.bucket(p("maxkey")).Put(text("K", bolt.MaxKeySize+1), []byte("x")); err != bolt.ErrKeyTooLarge {
			must(fmt.Errorf("expected ErrKeyTooLarge, got %v", err), "oversized key")
		}
	})
	f.update(func(w *writer) {
		// 6 keys of MaxKeySize bytes: 2 leaves, and the branch page above them overflows.
		for i := 0; i < 6; i++ {
			k := append([]byte{byte('A' + i)}, text(fmt.Sprintf("%02d", i), bolt.MaxKeySize-1)...)
			w.put(p("bigkeys"), k, []byte(fmt.Sprintf("bk%d", i)))
		}
		// Overwrite one big value with a smaller one (frees overflow pages).
		w.put(p("values"), []byte(fmt.Sprintf("v%08d", 65536)), pattern(99, 5000))
	})
	f.finish()
}

func freelistDB(outDir string) {
	f := newFixture(outDir, "freelist", bolt.Options{PageSize: 4096})
	const n = 3600
	key := func(i int) []byte { return []byte(fmt.Sprintf("churn-%06d", i)) }
	// Grow: ~2 values of 1800 bytes per leaf page, in several transactions.
	for start := 0; start < n; start += 600 {
		f.update(func(w *writer) {
			for i := start; i < start+600; i++ {
				w.put(p("churn"), key(i), text(fmt.Sprintf("<%06d>", i), 1800))
			}
		})
	}
	f.update(func(w *writer) {
		for i := 0; i < 50; i++ {
			w.put(p("keep"), []byte(fmt.Sprintf("keep%03d", i)), text("keep", 100))
		}
	})
	// Delete ~95% of the keys, keeping every 20th one (with a short value) so the
	// free ids are fragmented.
	f.update(func(w *writer) {
		for i := 0; i < n; i++ {
			if i%20 != 0 {
				w.del(p("churn"), key(i))
			} else {
				w.put(p("churn"), key(i), []byte(fmt.Sprintf("kept %d", i)))
			}
		}
	})
	// A small final transaction (the freelist page holds free and pending ids).
	f.update(func(w *writer) {
		w.put(p("keep"), []byte("last"), []byte("txn"))
	})
	f.finish()
}

func noFreelistDB(outDir string) {
	f := newFixture(outDir, "nofreelist", bolt.Options{PageSize: 4096, NoFreelistSync: true})
	f.update(func(w *writer) {
		for i := 0; i < 200; i++ {
			w.put(p("data"), be64(uint64(i)), text(fmt.Sprintf("[%d]", i), 500))
		}
		w.put(p("data", "sub"), []byte("s"), []byte("t"))
	})
	f.update(func(w *writer) {
		for i := 0; i < 200; i += 2 {
			w.del(p("data"), be64(uint64(i)))
		}
		w.nextSeq(p("data"))
	})
	f.reopen() // reopen rebuilds the freelist by scanning
	f.update(func(w *writer) {
		for i := 0; i < 50; i++ {
			w.put(p("more"), be64(uint64(i)), text("m", 300))
		}
	})
	f.finish()
	assertNoFreelist(f.path, 4096)
}

// assertNoFreelist checks that both meta pages have freelist = 0xFFFFFFFFFFFFFFFF.
// (This only validates the file; the JSON never comes from reading it.)
func assertNoFreelist(path string, pageSize int) {
	data, err := os.ReadFile(path)
	must(err, "read "+path)
	for m := 0; m < 2; m++ {
		// meta starts at byte 16 of the page; freelist is at meta offset 32.
		off := m*pageSize + 16 + 32
		if fl := binary.LittleEndian.Uint64(data[off : off+8]); fl != ^uint64(0) {
			must(fmt.Errorf("meta %d freelist = %#x, want 0xffffffffffffffff", m, fl), "nofreelist")
		}
	}
}

func escapedDB(outDir string) {
	f := newFixture(outDir, "escaped", bolt.Options{PageSize: 1024})
	f.update(func(w *writer) {
		for i := 0; i < 100; i++ {
			w.put(p("b"), be64(uint64(i)), text(fmt.Sprintf("<%d>", i), 50))
		}
		// Put and deleted without being recorded: it is in no expected contents, and its 144 MB of
		// hex would only be built to be dropped.
		must(w.bucket(p("b")).Put([]byte("huge"), pattern(7, 72<<20)), "put huge")
	})
	f.update(func(w *writer) {
		must(w.bucket(p("b")).Delete([]byte("huge")), "delete huge")
	})
	// The freelist this commit writes holds the huge value's pages, free or pending.
	f.update(func(w *writer) {
		w.put(p("b"), []byte("after"), []byte("the escape"))
	})
	f.finish()
	assertEscapedFreelist(f.path, 1024)
}

// assertEscapedFreelist checks that the freelist page of the meta in use (the higher
// txid) has the count escape: a header count of 0xFFFF and a first element of at least
// 0xFFFF. (This only validates the file; the JSON never comes from reading it.)
func assertEscapedFreelist(path string, pageSize int) {
	data, err := os.ReadFile(path)
	must(err, "read "+path)
	// A meta starts at byte 16 of its page: freelist at meta offset 32, txid at 48.
	meta := func(m int) (freelist, txid uint64) {
		at := m*pageSize + 16
		return binary.LittleEndian.Uint64(data[at+32:]), binary.LittleEndian.Uint64(data[at+48:])
	}
	fl0, tx0 := meta(0)
	fl1, tx1 := meta(1)
	fl := fl0
	if tx1 > tx0 {
		fl = fl1
	}
	page := int(fl) * pageSize
	// A page header: id (8), flags (2), count (2), overflow (4); elements from byte 16.
	count := binary.LittleEndian.Uint16(data[page+10:])
	ids := binary.LittleEndian.Uint64(data[page+16:])
	if count != 0xFFFF || ids < 0xFFFF {
		must(fmt.Errorf("freelist page %d: count %#x, first element %d; want the escape",
			fl, count, ids), "escaped")
	}
	fmt.Printf("mkfixtures: %s: freelist page %d lists %d ids (escaped)\n", path, fl, ids)
}

func pageSize1kDB(outDir string) {
	f := newFixture(outDir, "pagesize1k", bolt.Options{PageSize: 1024})
	f.update(func(w *writer) {
		for i := 0; i < 400; i++ {
			w.put(p("a"), []byte(fmt.Sprintf("a%05d", i)), pattern(i, 24))
		}
		for i := 0; i < 5; i++ {
			w.put(p("b"), []byte(fmt.Sprintf("b%d", i)), pattern(i, 1000*(i+1)))
		}
		w.put(p("c"), []byte("inline"), []byte("yes")) // limit 256 bytes
		w.put(p("d", "e"), []byte{0x00}, []byte{0xff})
		w.put(p("d", "e", "f"), []byte("leaf"), []byte{})
		w.nextSeq(p("d", "e"))
	})
	f.finish()
}

func pageSize64kDB(outDir string) {
	f := newFixture(outDir, "pagesize64k", bolt.Options{PageSize: 65536})
	f.update(func(w *writer) {
		for i := 0; i < 1000; i++ {
			w.put(p("a"), []byte(fmt.Sprintf("a%06d", i)), pattern(i, 50))
		}
		// ~10 KB of content, below the 16384-byte inline limit for 64 KiB pages.
		for i := 0; i < 10; i++ {
			w.put(p("inl"), []byte(fmt.Sprintf("i%d", i)), pattern(i, 1000))
		}
		w.put(p("big"), []byte("v"), pattern(3, 140000))
		w.put(p("n", "m"), []byte("k"), []byte("v"))
		w.nextSeq(p("n"))
	})
	f.finish()
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-escaped" {
		must(os.MkdirAll(os.Args[2], 0755), "mkdir "+os.Args[2])
		escapedDB(os.Args[2])
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mkfixtures OUTDIR | mkfixtures -escaped OUTDIR")
		os.Exit(2)
	}
	outDir := os.Args[1]
	must(os.MkdirAll(outDir, 0755), "mkdir "+outDir)
	nestedDB(outDir)
	inlineDB(outDir)
	overflowDB(outDir)
	freelistDB(outDir)
	noFreelistDB(outDir)
	pageSize1kDB(outDir)
	pageSize64kDB(outDir)
}
