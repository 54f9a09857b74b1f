//! The bytes of a simulated disk: a durable image and the pending (unsynced) sectors over it, with
//! no fault logic. Reads see pending over durable over "never written".
//!
//! Both images are sparse maps from sector index to exactly `sector_size` bytes; a sector in
//! neither map (or hidden, below) was never written and reads as [`Fill`] says.
//!
//! Invariants (checked by `assert_invariants` after every change):
//! - every stored sector is exactly `sector_size` bytes;
//! - no pending sector lies at or past `sector_count(len)`; a durable sector at or past
//!   `sector_count(durable_len)` is one a sync wrote back without persisting the length
//!   (`own-barrier`): on the media, but out of the durable length's reach, so a crash drops it
//!   (none is left after a crash);
//! - a durable sector at or past `hidden_from` is invisible (truncated since the last sync: the
//!   truncation is not durable yet, but reads must not see the old bytes); every durable sector
//!   at or past `sector_count(len)` is hidden;
//! - `len_low` is the smallest length since the last sync or crash, at most `len`.
//!
//! Bytes past the length inside the last sector are don't-care: growing the length resets them to
//! the never-written fill first, so shrink-then-grow never resurrects old bytes.

use super::faults::garbage_bytes;
use super::sector_map::{Sector, SectorMap, CHUNK};
use std::sync::Arc;

/// How never-written sectors read: zeros, or seed-derived garbage.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fill {
    pub(crate) seed: u64,
    pub(crate) garbage: bool,
}

impl Fill {
    /// Bytes `offset..offset + out.len()` of never-written sector `sector`.
    fn fill(&self, sector: u64, offset: usize, out: &mut [u8]) {
        if self.garbage {
            garbage_bytes(self.seed, sector, offset, out);
        } else {
            out.fill(0);
        }
    }
}

/// What a crash does with one pending sector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    Lost,
    Whole,
    /// Kept, except these bytes of the sector, which keep their durable (old) content.
    Torn(std::ops::Range<usize>),
}

/// What a crash did to the pending sectors.
#[derive(Clone, Debug, Default)]
pub(crate) struct CrashApplied {
    /// Pending sectors written into the durable image (whole or torn), ascending.
    pub(crate) kept: Vec<u64>,
    /// Pending sectors dropped (not chosen, or past the durable length), ascending.
    pub(crate) lost: Vec<u64>,
    /// Of `kept`, the sectors a tear left different from both their old and their new bytes,
    /// ascending.
    pub(crate) torn: Vec<u64>,
}

#[derive(Clone, Debug)]
pub(crate) struct Sectors {
    sector_size: u64,
    /// Current length, unsynced changes included.
    len: u64,
    /// Length as of the last successful sync (or crash).
    durable_len: u64,
    /// Smallest length since the last sync or crash: a shrink below the durable length that a
    /// sync persists even when it persists no growth.
    len_low: u64,
    /// Sector bytes are shared (`Arc`) and never changed in place: a write, a tear or a bit flip
    /// replaces a sector's buffer, so a fork ([`Sectors::forked`]) can share every buffer with
    /// the disk it came from instead of copying the file.
    durable: SectorMap,
    pending: SectorMap,
    /// The most sector bytes `durable` and `pending` held at once (see [`Sectors::held_bytes`]).
    peak_held: u64,
    /// Durable sectors at or past this index are invisible until the next sync or crash.
    hidden_from: Option<u64>,
    pub(crate) fill: Fill,
}

fn new_sector(bytes: impl Into<Box<[u8]>>) -> Sector {
    Arc::new(bytes.into())
}

/// The most bytes [`Sectors::each_image_piece`] hands over at once.
const IMAGE_PIECE: usize = 64 * 1024;

/// `out.copy_from_slice(src)`, with whole sectors of the small sizes copied as fixed-size arrays,
/// which the compiler does in a few vector moves: through `memcpy`, a 4 KiB page read from
/// 64 B sectors made 64 calls of about 24 instructions each on top of the copying (the
/// simulator's reads of pages, `docs/scale.md`). Larger pieces are few per page.
#[inline(always)]
fn copy_piece(out: &mut [u8], src: &[u8]) {
    fn fixed<const N: usize>(out: &mut [u8], src: &[u8]) -> bool {
        match (<&mut [u8; N]>::try_from(out), <&[u8; N]>::try_from(src)) {
            (Ok(o), Ok(s)) => {
                *o = *s;
                true
            }
            _ => false,
        }
    }
    let done = match out.len() {
        64 => fixed::<64>(out, src),
        128 => fixed::<128>(out, src),
        256 => fixed::<256>(out, src),
        _ => false,
    };
    if !done {
        out.copy_from_slice(src);
    }
}

/// A position inside one sector, as an index: always below the sector size, which fits `usize`.
fn in_sector(v: u64) -> usize {
    usize::try_from(v).expect("a position inside a sector fits usize")
}

impl Sectors {
    pub(crate) fn new(sector_size: u64, fill: Fill) -> Sectors {
        assert!(sector_size.is_power_of_two(), "sector size {sector_size}");
        Sectors {
            sector_size,
            len: 0,
            durable_len: 0,
            len_low: 0,
            durable: SectorMap::new(),
            pending: SectorMap::new(),
            peak_held: 0,
            hidden_from: None,
            fill,
        }
    }

    /// Bytes of sector buffers this disk's maps hold, whether or not another disk shares them:
    /// the memory the disk keeps apart from fixed per-entry overhead.
    pub(crate) fn held_bytes(&self) -> u64 {
        (self.durable.len() + self.pending.len()) as u64 * self.sector_size
    }

    /// The largest [`Sectors::held_bytes`] seen after any change.
    pub(crate) fn peak_held_bytes(&self) -> u64 {
        self.peak_held
    }

    /// Every sector buffer held, durable ones first (for counting buffers shared between disks).
    pub(crate) fn buffers(&self) -> impl Iterator<Item = &Sector> {
        self.durable.values().chain(self.pending.values())
    }

    fn note_peak(&mut self) {
        self.peak_held = self.peak_held.max(self.held_bytes());
    }

    /// A disk state whose durable image, length and current image are what reads of `self` see
    /// now, with nothing pending, for a disk filling never-written sectors with `fill`. Sector
    /// buffers are shared with `self` (copy-on-write: neither side changes a buffer in place)
    /// unless `copy` is set, the negative control of the memory check (a full second copy).
    /// The result reads exactly like a fresh disk that was written `self`'s image and synced:
    /// the bytes of the last sector past the length are `fill`'s, and when either fill is
    /// garbage every never-written sector inside the length is written out with `self`'s fill.
    pub(crate) fn forked(&self, fill: Fill, copy: bool) -> Sectors {
        let mut out = Sectors::new(self.sector_size, fill);
        let count = self.sector_count(self.len);
        let materialise = self.fill.garbage || fill.garbage;
        for s in 0..count {
            let bytes = match self.visible(s) {
                Some(b) if copy => new_sector(b),
                Some(_) => self.shared(s),
                None if materialise => new_sector(self.sector_now(s)),
                None => continue,
            };
            out.durable.insert(s, bytes);
        }
        out.len = self.len;
        out.durable_len = self.len;
        out.len_low = self.len;
        out.normalise_tail();
        out.note_peak();
        out.assert_invariants();
        out
    }

    /// The buffer reads see for sector `s`, which is held.
    fn shared(&self, s: u64) -> Sector {
        let in_pending = self.pending.get(s);
        let held = in_pending.or_else(|| self.durable.get(s));
        Sector::clone(held.expect("a visible sector is held"))
    }

    /// Give the last, partial sector's bytes past the length this disk's fill, as a fresh disk
    /// written up to the length would have them.
    fn normalise_tail(&mut self) {
        let r = in_sector(self.len % self.sector_size);
        if r == 0 {
            return;
        }
        let s = self.len / self.sector_size;
        if let Some(bytes) = self.durable.get(s) {
            let mut tail = vec![0u8; bytes.len() - r];
            self.fill.fill(s, r, &mut tail);
            if bytes[r..] != tail[..] {
                let mut sector: Box<[u8]> = Box::from(&bytes[..]);
                sector[r..].copy_from_slice(&tail);
                self.durable.insert(s, sector.into());
            }
        }
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    pub(crate) fn durable_len(&self) -> u64 {
        self.durable_len
    }

    pub(crate) fn sector_size(&self) -> u64 {
        self.sector_size
    }

    /// Sectors needed to hold `bytes` bytes.
    pub(crate) fn sector_count(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.sector_size)
    }

    /// Sector indexes with unsynced data, ascending.
    pub(crate) fn pending_keys(&self) -> Vec<u64> {
        self.pending.iter().map(|(s, _)| s).collect()
    }

    /// How many sectors have unsynced data.
    pub(crate) fn pending_count(&self) -> u64 {
        self.pending.len() as u64
    }

    /// The smallest length since the last sync or crash.
    pub(crate) fn len_low(&self) -> u64 {
        self.len_low
    }

    /// Sector indexes with durable data inside the durable length, ascending.
    pub(crate) fn durable_keys(&self) -> Vec<u64> {
        let inside = self.sector_count(self.durable_len);
        self.durable.keys_below(inside).collect()
    }

    /// What reads see of sector `s`, or `None` when it reads as never written.
    fn visible(&self, s: u64) -> Option<&[u8]> {
        if let Some(bytes) = self.pending.get(s) {
            return Some(bytes);
        }
        if self.hidden_from.is_some_and(|h| s >= h) {
            return None;
        }
        self.durable.get(s).map(|b| &b[..])
    }

    /// A copy of what reads see of sector `s`.
    fn sector_now(&self, s: u64) -> Box<[u8]> {
        match self.visible(s) {
            Some(bytes) => bytes.into(),
            None => {
                let mut bytes = vec![0u8; in_sector(self.sector_size)].into_boxed_slice();
                self.fill.fill(s, 0, &mut bytes);
                bytes
            }
        }
    }

    /// Copy `offset..offset + buf.len()` into `buf`. Returns how many never-written sectors the
    /// read touched. The caller checked the range is inside the length.
    pub(crate) fn read(&self, offset: u64, buf: &mut [u8]) -> u64 {
        assert!(
            offset + buf.len() as u64 <= self.len,
            "read past the length"
        );
        // The two maps walked a chunk at a time: one lookup of each per chunk, then array
        // slots (a 4 KiB page is 64 sectors of 64 B). What each sector reads is `visible`'s
        // answer: pending first, then durable unless hidden.
        let sectors = self.range_sectors(offset, buf.len() as u64);
        let visible_end = self
            .hidden_from
            .map_or(sectors.end, |h| h.clamp(sectors.start, sectors.end));
        let (mut chunk, mut pending, mut durable) = (u64::MAX, None, None);
        let mut never_written = 0;
        let mut done = 0usize;
        // Only the first sector may be read from a position inside it: the others from 0.
        let mut r = in_sector(offset % self.sector_size);
        for s in sectors {
            if s / CHUNK != chunk {
                chunk = s / CHUNK;
                pending = self.pending.chunk(chunk);
                durable = self.durable.chunk(chunk);
            }
            let slot = (s % CHUNK) as usize;
            debug_assert_eq!((offset + done as u64) / self.sector_size, s);
            let take = (in_sector(self.sector_size) - r).min(buf.len() - done);
            let out = &mut buf[done..done + take];
            let on_pending = pending.and_then(|p| p[slot].as_ref());
            let on_durable = || durable.filter(|_| s < visible_end)?[slot].as_ref();
            match on_pending.or_else(on_durable) {
                Some(bytes) => copy_piece(out, &bytes[r..r + take]),
                None => {
                    self.fill.fill(s, r, out);
                    never_written += 1;
                }
            }
            done += take;
            r = 0;
        }
        debug_assert_eq!(done, buf.len());
        never_written
    }

    /// The sectors covering bytes `offset..offset + n` (empty when `n` is 0).
    pub(crate) fn range_sectors(&self, offset: u64, n: u64) -> std::ops::Range<u64> {
        if n == 0 {
            return 0..0;
        }
        offset / self.sector_size..(offset + n - 1) / self.sector_size + 1
    }

    /// Write `data` at `offset` into the pending image (read-modify-write of partial sectors).
    /// The caller grew the length first. Returns the sectors written, ascending.
    pub(crate) fn write(&mut self, offset: u64, data: &[u8]) -> Vec<u64> {
        assert!(
            offset + data.len() as u64 <= self.len,
            "grow before writing"
        );
        let sectors = self.range_sectors(offset, data.len() as u64);
        let mut touched =
            Vec::with_capacity(usize::try_from(sectors.end - sectors.start).unwrap_or(0));
        let mut done = 0usize;
        while done < data.len() {
            let pos = offset + done as u64;
            let s = pos / self.sector_size;
            let r = in_sector(pos % self.sector_size);
            let take = (in_sector(self.sector_size) - r).min(data.len() - done);
            let new = &data[done..done + take];
            let sector = if take == in_sector(self.sector_size) {
                new_sector(new)
            } else {
                let mut sector = self.sector_now(s);
                sector[r..r + take].copy_from_slice(new);
                new_sector(sector)
            };
            self.pending.insert(s, sector);
            touched.push(s);
            done += take;
        }
        self.note_peak();
        self.assert_invariants();
        touched
    }

    /// Grow to `new_len`: the bytes past the old length in its last sector become never-written
    /// fill again (so old bytes past a truncation do not come back), as a pending write when they
    /// differ.
    pub(crate) fn grow(&mut self, new_len: u64) {
        assert!(new_len >= self.len, "grow shrinks");
        let r = in_sector(self.len % self.sector_size);
        if new_len > self.len && r != 0 {
            let s = self.len / self.sector_size;
            if let Some(bytes) = self.visible(s) {
                let mut tail = vec![0u8; bytes.len() - r];
                self.fill.fill(s, r, &mut tail);
                if bytes[r..] != tail[..] {
                    let mut sector: Box<[u8]> = bytes.into();
                    sector[r..].copy_from_slice(&tail);
                    self.pending.insert(s, sector.into());
                }
            }
        }
        self.len = new_len;
        self.note_peak();
        self.assert_invariants();
    }

    /// Shrink to `new_len`: pending sectors past it vanish, durable ones are hidden until sync.
    pub(crate) fn truncate(&mut self, new_len: u64) {
        assert!(new_len <= self.len, "truncate grows");
        let first_gone = self.sector_count(new_len);
        self.pending.truncate_from(first_gone);
        self.hidden_from = Some(self.hidden_from.map_or(first_gone, |h| h.min(first_gone)));
        self.len = new_len;
        self.len_low = self.len_low.min(new_len);
        self.assert_invariants();
    }

    /// Forget pending sector `s` (a failed sync dropped it): reads see the durable bytes again.
    pub(crate) fn drop_pending(&mut self, s: u64) {
        let dropped = self.pending.remove(s);
        assert!(dropped.is_some(), "sector {s} was not pending");
    }

    /// Write every pending sector back to the media and make the length `durable_len` durable.
    /// It is either the current length, or at most the smallest length since the last sync (a
    /// truncation since then is persisted whole, never a length the file did not pass through);
    /// in the second case sectors written back past it stay out of its reach until a later sync
    /// persists a length covering them, and a crash before then drops them. Returns the sectors
    /// written back.
    pub(crate) fn sync(&mut self, durable_len: u64) -> u64 {
        assert!(
            durable_len == self.len || durable_len <= self.len_low,
            "durable length {durable_len}: neither the length {} nor within the smallest length {} since the last sync",
            self.len,
            self.len_low
        );
        if let Some(h) = self.hidden_from.take() {
            self.durable.truncate_from(h);
        }
        self.durable.truncate_from(self.sector_count(self.len));
        let made_durable = self.pending.len() as u64;
        self.write_back();
        self.durable_len = durable_len;
        self.len_low = self.len;
        self.assert_invariants();
        made_durable
    }

    /// Move every pending sector into the durable map, replacing what it held: a slot per
    /// sector, whatever the file's size.
    fn write_back(&mut self) {
        self.durable.absorb(&mut self.pending);
        debug_assert!(self.pending.is_empty());
    }

    /// The bytes sector `s` had in the durable image (never-written fill when it has none).
    fn durable_sector(&self, s: u64) -> Box<[u8]> {
        match self.durable.get(s) {
            Some(bytes) => Box::from(&bytes[..]),
            None => {
                let mut bytes = vec![0u8; in_sector(self.sector_size)].into_boxed_slice();
                self.fill.fill(s, 0, &mut bytes);
                bytes
            }
        }
    }

    /// Power cut: each pending sector is written into the durable image as `keep` says (whole,
    /// or torn: part of it keeps its old bytes), unless it lies past the durable length (the
    /// length is durable only by sync, so such a sector is lost with it). `keep` is asked about
    /// every pending sector, ascending. Afterwards reads see only the durable image.
    pub(crate) fn crash(&mut self, keep: &mut dyn FnMut(u64) -> Keep) -> CrashApplied {
        let durable_sectors = self.sector_count(self.durable_len);
        let mut applied = CrashApplied::default();
        for (s, new) in self.pending.take_all() {
            let wanted = keep(s);
            if wanted == Keep::Lost || s >= durable_sectors {
                applied.lost.push(s);
                continue;
            }
            let bytes = match wanted {
                Keep::Torn(old_part) => {
                    let old = self.durable_sector(s);
                    let mut bytes: Box<[u8]> = Box::from(&new[..]);
                    bytes[old_part.clone()].copy_from_slice(&old[old_part]);
                    if bytes[..] != new[..] && bytes != old {
                        applied.torn.push(s);
                    }
                    new_sector(bytes)
                }
                _ => new,
            };
            self.durable.insert(s, bytes);
            applied.kept.push(s);
        }
        // Written back past the durable length: the length that reached it is gone.
        self.durable.truncate_from(durable_sectors);
        assert!(self.durable.last().is_none_or(|s| s < durable_sectors));
        self.hidden_from = None;
        self.len = self.durable_len;
        self.len_low = self.len;
        self.assert_invariants();
        applied
    }

    /// Flip bit `bit` (counted from the sector's first byte) of durable sector `s`.
    pub(crate) fn flip_durable_bit(&mut self, s: u64, bit: u64) {
        assert!(
            bit < self.durable_valid_bytes(s) * 8,
            "bit {bit} past sector {s}'s data"
        );
        let sector = self.durable.get_mut(s).expect("flip in a durable sector");
        // A fresh buffer: the old one may be shared with a fork.
        let mut bytes: Box<[u8]> = Box::from(&sector[..]);
        bytes[in_sector(bit / 8)] ^= 1 << (bit % 8);
        *sector = bytes.into();
    }

    /// Bytes of durable sector `s` that lie inside the durable length.
    pub(crate) fn durable_valid_bytes(&self, s: u64) -> u64 {
        let start = s * self.sector_size;
        assert!(
            start < self.durable_len,
            "sector {s} past the durable length"
        );
        (self.durable_len - start).min(self.sector_size)
    }

    /// What reads see now, `len` bytes.
    pub(crate) fn image(&self) -> Vec<u8> {
        let mut bytes = vec![0u8; usize::try_from(self.len).expect("image fits memory")];
        self.read(0, &mut bytes);
        bytes
    }

    /// What reads see, from byte 0 to the length, handed to `each` in pieces of at most
    /// [`IMAGE_PIECE`] bytes: for hashing an image without holding a second copy of it.
    pub(crate) fn each_image_piece(&self, mut each: impl FnMut(&[u8])) {
        let piece = IMAGE_PIECE.min(usize::try_from(self.len).unwrap_or(IMAGE_PIECE));
        let mut buf = vec![0u8; piece];
        let mut at = 0u64;
        while at < self.len {
            let n = usize::try_from(self.len - at).map_or(piece, |left| left.min(piece));
            self.read(at, &mut buf[..n]);
            each(&buf[..n]);
            at += n as u64;
        }
    }

    /// The durable image, `durable_len` bytes: what a crash losing all pending would leave.
    pub(crate) fn durable_image(&self) -> Vec<u8> {
        let len = usize::try_from(self.durable_len).expect("image fits memory");
        let mut bytes = vec![0u8; len];
        self.read_durable(0, &mut bytes);
        bytes
    }

    /// Copy bytes `offset..offset + out.len()` of the durable image into `out`, which lies inside
    /// the durable length.
    pub(crate) fn read_durable(&self, offset: u64, out: &mut [u8]) {
        assert!(
            offset + out.len() as u64 <= self.durable_len,
            "durable read past the durable length"
        );
        let mut done = 0usize;
        while done < out.len() {
            let pos = offset + done as u64;
            let s = pos / self.sector_size;
            let r = in_sector(pos % self.sector_size);
            let take = (in_sector(self.sector_size) - r).min(out.len() - done);
            let chunk = &mut out[done..done + take];
            match self.durable.get(s) {
                Some(sector) => chunk.copy_from_slice(&sector[r..r + take]),
                None => self.fill.fill(s, r, chunk),
            }
            done += take;
        }
    }

    fn assert_invariants(&self) {
        assert!(self.len_low <= self.len, "low-water length past the length");
        if let Some(last) = self.pending.last() {
            assert!(
                last < self.sector_count(self.len),
                "pending sector {last} past the length"
            );
        }
        if let Some(last) = self.durable.last() {
            if last >= self.sector_count(self.len) {
                let h = self
                    .hidden_from
                    .expect("durable sectors past the length are hidden");
                assert!(h <= self.sector_count(self.len), "hidden from {h}");
            }
        }
        if cfg!(debug_assertions) {
            let ss = in_sector(self.sector_size);
            assert!(self.pending.values().all(|b| b.len() == ss));
            assert!(self.durable.values().all(|b| b.len() == ss));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SimRng;

    /// What a read of `offset..offset + n` sees, sector by sector through `visible`: the
    /// definition the range walk of [`Sectors::read`] must keep.
    fn read_by_sector(d: &Sectors, offset: u64, n: usize) -> Vec<u8> {
        (offset..offset + n as u64)
            .map(|pos| d.sector_now(pos / d.sector_size)[in_sector(pos % d.sector_size)])
            .collect()
    }

    /// Seeded writes, growths, truncations (hidden durable sectors), syncs and crashes; after each, random reads equal the sector-by-sector definition and
    /// count the never-written sectors they touched.
    #[test]
    fn reads_and_syncs_match_the_sector_by_sector_definition() {
        let mut syncs = 0;
        for seed in 0..40 {
            let mut rng = SimRng::new(seed);
            let fill = Fill {
                seed,
                garbage: seed % 2 == 0,
            };
            let mut d = Sectors::new(64 << rng.below(4), fill);
            for _ in 0..300 {
                match rng.below(10) {
                    0..=4 => {
                        let offset = rng.below(d.len + 1024);
                        let data: Vec<u8> = (0..rng.range(1, 700))
                            .map(|_| rng.below(256) as u8)
                            .collect();
                        d.grow(d.len.max(offset + data.len() as u64));
                        d.write(offset, &data);
                    }
                    5 => d.truncate(rng.below(d.len + 1)),
                    6 | 7 => {
                        let durable = d.durable.len();
                        let mut want = d.durable.clone();
                        if let Some(h) = d.hidden_from {
                            want.truncate_from(h);
                        }
                        want.truncate_from(d.sector_count(d.len));
                        for (s, bytes) in d.pending.iter() {
                            want.insert(s, bytes.clone());
                        }
                        d.sync(d.len);
                        assert_eq!(d.durable, want, "seed {seed}: sync of {durable}");
                        syncs += 1;
                    }
                    8 => {
                        d.crash(&mut |s| if s % 2 == 0 { Keep::Whole } else { Keep::Lost });
                    }
                    _ => d.grow(d.len + rng.below(300)),
                }
                for _ in 0..4 {
                    if d.len == 0 {
                        break;
                    }
                    let offset = rng.below(d.len);
                    let n = rng.range(1, 5000).min(d.len - offset) as usize;
                    let mut got = vec![0u8; n];
                    let never = d.read(offset, &mut got);
                    assert_eq!(
                        got,
                        read_by_sector(&d, offset, n),
                        "seed {seed} read {offset}+{n}"
                    );
                    let unwritten = d
                        .range_sectors(offset, n as u64)
                        .filter(|&s| d.visible(s).is_none())
                        .count() as u64;
                    assert_eq!(never, unwritten, "seed {seed}: never-written count");
                }
            }
        }
        assert!(syncs > 100, "{syncs} syncs");
    }
}
