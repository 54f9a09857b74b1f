//! A sparse map from sector index to sector bytes, kept in chunks of [`CHUNK`] consecutive
//! sectors: the simulated disk's durable image and its pending sectors.
//!
//! A map of one entry per sector made every read and every sync walk a B-tree per sector: a
//! 4 KiB page is 64 sectors of 64 B, and a sync moved each pending sector into the durable tree
//! one descent at a time (or rebuilt the whole tree). Here a chunk is found once and its
//! sectors are array slots, so a read visits one chunk per [`CHUNK`] sectors and a sync moves a
//! slot per pending sector. Memory stays proportional to what was written, never to a length
//! or an offset: a chunk exists only while it holds a sector, and costs [`CHUNK`] slots of 8
//! bytes beside the sectors' own buffers.

use std::collections::BTreeMap;
use std::sync::Arc;

/// One sector's bytes, shared between disk states and never changed in place. The bytes are
/// their own allocation of exactly the sector's size, apart from the `Arc`'s counts: in one
/// allocation (`Arc<[u8]>`) a 4 KiB sector is 4,112 bytes, which a size-class allocator such
/// as mimalloc rounds up to 5,120, and a 2 GiB simulated file then held 2.9 GB instead of 2.2.
pub(crate) type Sector = Arc<Box<[u8]>>;

/// Sectors per chunk.
pub(crate) const CHUNK: u64 = 64;

/// The slots of one chunk: sector `CHUNK * chunk + i` in slot `i`.
pub(crate) type Slots = [Option<Sector>; CHUNK as usize];

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SectorMap {
    /// Chunk index → its slots; a chunk with no sector held is removed.
    chunks: BTreeMap<u64, Chunk>,
    /// Sectors held, over every chunk.
    held: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Chunk {
    slots: Box<Slots>,
    /// Slots that hold a sector.
    held: u32,
}

impl Chunk {
    fn new() -> Chunk {
        Chunk {
            slots: Box::new(std::array::from_fn(|_| None)),
            held: 0,
        }
    }
}

fn split(s: u64) -> (u64, usize) {
    (s / CHUNK, (s % CHUNK) as usize)
}

impl SectorMap {
    pub(crate) fn new() -> SectorMap {
        SectorMap::default()
    }

    /// Sectors held.
    pub(crate) fn len(&self) -> usize {
        self.held
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.held == 0
    }

    pub(crate) fn get(&self, s: u64) -> Option<&Sector> {
        let (c, i) = split(s);
        self.chunks.get(&c)?.slots[i].as_ref()
    }

    pub(crate) fn get_mut(&mut self, s: u64) -> Option<&mut Sector> {
        let (c, i) = split(s);
        self.chunks.get_mut(&c)?.slots[i].as_mut()
    }

    /// The slots of chunk `c`, if it holds any sector: a range walk's one lookup per chunk.
    pub(crate) fn chunk(&self, c: u64) -> Option<&Slots> {
        self.chunks.get(&c).map(|chunk| &*chunk.slots)
    }

    /// Put `bytes` at sector `s`, returning what it held.
    pub(crate) fn insert(&mut self, s: u64, bytes: Sector) -> Option<Sector> {
        let (c, i) = split(s);
        let chunk = self.chunks.entry(c).or_insert_with(Chunk::new);
        let old = chunk.slots[i].replace(bytes);
        if old.is_none() {
            chunk.held += 1;
            self.held += 1;
        }
        old
    }

    pub(crate) fn remove(&mut self, s: u64) -> Option<Sector> {
        let (c, i) = split(s);
        let chunk = self.chunks.get_mut(&c)?;
        let old = chunk.slots[i].take()?;
        chunk.held -= 1;
        self.held -= 1;
        if chunk.held == 0 {
            self.chunks.remove(&c);
        }
        Some(old)
    }

    /// Drop every sector at or past `from`.
    pub(crate) fn truncate_from(&mut self, from: u64) {
        let (c, i) = split(from);
        let gone = self.chunks.split_off(&(c + 1));
        self.held -= gone.values().map(|k| k.held as usize).sum::<usize>();
        if let Some(chunk) = self.chunks.get_mut(&c) {
            for slot in &mut chunk.slots[i..] {
                if slot.take().is_some() {
                    chunk.held -= 1;
                    self.held -= 1;
                }
            }
            if chunk.held == 0 {
                self.chunks.remove(&c);
            }
        }
    }

    /// The highest sector held.
    pub(crate) fn last(&self) -> Option<u64> {
        let (&c, chunk) = self.chunks.last_key_value()?;
        let i = chunk.slots.iter().rposition(Option::is_some)?;
        Some(c * CHUNK + i as u64)
    }

    /// Every sector held, ascending.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, &Sector)> {
        self.chunks.iter().flat_map(|(&c, chunk)| {
            let slots = chunk.slots.iter().enumerate();
            slots.filter_map(move |(i, b)| Some((c * CHUNK + i as u64, b.as_ref()?)))
        })
    }

    /// The sectors held below `end`, ascending.
    pub(crate) fn keys_below(&self, end: u64) -> impl Iterator<Item = u64> + '_ {
        self.iter().map(|(s, _)| s).take_while(move |&s| s < end)
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &Sector> {
        self.iter().map(|(_, b)| b)
    }

    /// Every sector held, ascending, leaving the map empty.
    pub(crate) fn take_all(&mut self) -> impl Iterator<Item = (u64, Sector)> {
        self.held = 0;
        std::mem::take(&mut self.chunks)
            .into_iter()
            .flat_map(|(c, chunk)| {
                let slots = (*chunk.slots).into_iter().enumerate();
                slots.filter_map(move |(i, b)| Some((c * CHUNK + i as u64, b?)))
            })
    }

    /// Move every sector of `from` into this map, replacing what it held there: a chunk absent
    /// here moves whole, others slot by slot.
    pub(crate) fn absorb(&mut self, from: &mut SectorMap) {
        for (c, chunk) in std::mem::take(&mut from.chunks) {
            match self.chunks.get_mut(&c) {
                None => {
                    self.held += chunk.held as usize;
                    self.chunks.insert(c, chunk);
                }
                Some(mine) => {
                    for (slot, bytes) in mine.slots.iter_mut().zip(*chunk.slots) {
                        let Some(bytes) = bytes else { continue };
                        if slot.replace(bytes).is_none() {
                            mine.held += 1;
                            self.held += 1;
                        }
                    }
                }
            }
        }
        from.held = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SimRng;

    fn sector(v: u8) -> Sector {
        Arc::new(vec![v; 4].into_boxed_slice())
    }

    fn same(map: &SectorMap, model: &BTreeMap<u64, Sector>) {
        let got: Vec<(u64, Sector)> = map.iter().map(|(s, b)| (s, b.clone())).collect();
        let want: Vec<(u64, Sector)> = model.iter().map(|(&s, b)| (s, b.clone())).collect();
        assert_eq!(got, want);
        assert_eq!(map.len(), model.len());
        assert_eq!(map.is_empty(), model.is_empty());
        assert_eq!(map.last(), model.keys().next_back().copied());
        assert!(
            map.chunks.values().all(|c| c.held > 0),
            "an empty chunk kept"
        );
        for (&c, chunk) in &map.chunks {
            let held = chunk.slots.iter().filter(|s| s.is_some()).count() as u32;
            assert_eq!(chunk.held, held, "chunk {c}'s count");
        }
    }

    /// Seeded inserts, removals, truncations, absorbs and drains, on sectors that cross chunk
    /// boundaries, against a `BTreeMap` of one entry per sector.
    #[test]
    fn it_behaves_as_a_map_of_one_entry_per_sector() {
        for seed in 0..60 {
            let mut rng = SimRng::new(seed);
            let (mut map, mut model) = (SectorMap::new(), BTreeMap::new());
            let (mut other, mut other_model) = (SectorMap::new(), BTreeMap::new());
            let span = 1 + rng.below(5 * CHUNK);
            for _ in 0..400 {
                let s = rng.below(span);
                match rng.below(9) {
                    0..=2 => {
                        let b = sector(rng.below(256) as u8);
                        assert_eq!(map.insert(s, b.clone()), model.insert(s, b));
                    }
                    3 => assert_eq!(map.remove(s), model.remove(&s)),
                    4 => {
                        map.truncate_from(s);
                        drop(model.split_off(&s));
                    }
                    5 => {
                        let b = sector(rng.below(256) as u8);
                        other.insert(s, b.clone());
                        other_model.insert(s, b);
                    }
                    6 => {
                        map.absorb(&mut other);
                        model.append(&mut other_model);
                        same(&other, &other_model);
                    }
                    7 if rng.below(8) == 0 => {
                        let drained: Vec<_> = map.take_all().collect();
                        let want: Vec<_> = std::mem::take(&mut model).into_iter().collect();
                        assert_eq!(drained, want);
                    }
                    _ => {
                        assert_eq!(map.get(s), model.get(&s));
                        let (c, i) = split(s);
                        let slot = map.chunk(c).and_then(|slots| slots[i].as_ref());
                        assert_eq!(slot, model.get(&s));
                        let below: Vec<u64> = map.keys_below(s).collect();
                        let want: Vec<u64> = model.range(..s).map(|(&k, _)| k).collect();
                        assert_eq!(below, want);
                    }
                }
                same(&map, &model);
            }
        }
    }

    #[test]
    fn a_sector_written_far_out_costs_one_chunk() {
        let mut map = SectorMap::new();
        map.insert(1 << 34, sector(1));
        assert_eq!((map.chunks.len(), map.len()), (1, 1));
        assert_eq!(map.last(), Some(1 << 34));
        *map.get_mut(1 << 34).unwrap() = sector(2);
        assert_eq!(map.get(1 << 34), Some(&sector(2)));
        map.truncate_from(1 << 34);
        assert!(map.is_empty() && map.chunks.is_empty());
    }
}
