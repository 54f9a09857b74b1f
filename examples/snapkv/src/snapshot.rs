//! The snapshot file: `SNAPKV01`, the commit number, the payload's length and the FNV-1a
//! checksum of the commit number and the payload (8 bytes each, little-endian), then the payload — the tables, each its name and
//! its keys and values, every byte string as a 4-byte length and its bytes.

use super::{Error, File, Tables};

const MAGIC: &[u8; 8] = b"SNAPKV01";
const HEADER_LEN: usize = 32;
/// The largest snapshot read back: a bound on what a damaged length makes the reader allocate.
pub const SNAPSHOT_LEN_MAX: u64 = 64 << 20;

/// FNV-1a over the commit number and the payload.
fn checksum(txid: u64, payload: &[u8]) -> u64 {
    txid.to_le_bytes()
        .iter()
        .chain(payload)
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    let len = u32::try_from(b.len()).expect("a byte string below 4 GiB");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(b);
}

pub fn encode(txid: u64, tables: &Tables) -> Vec<u8> {
    let mut payload = Vec::new();
    payload.extend_from_slice(&(tables.len() as u32).to_le_bytes());
    for (name, t) in tables {
        put_bytes(&mut payload, name);
        payload.extend_from_slice(&(t.len() as u32).to_le_bytes());
        for (k, v) in t {
            put_bytes(&mut payload, k);
            put_bytes(&mut payload, v);
        }
    }
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&txid.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(txid, &payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

fn word(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Read a snapshot: its commit number and tables, or why it is not one written whole.
pub fn read(f: &impl File) -> Result<(u64, Tables), Error> {
    let len = f.len()?;
    if len < HEADER_LEN as u64 {
        return Err(Error::Corrupt(format!(
            "{len} bytes, below the {HEADER_LEN}-byte header"
        )));
    }
    let mut header = [0u8; HEADER_LEN];
    f.read_at(0, &mut header)?;
    if &header[..8] != MAGIC {
        return Err(Error::Corrupt("no SNAPKV01 magic".into()));
    }
    let (txid, payload_len, sum) = (word(&header, 8), word(&header, 16), word(&header, 24));
    if payload_len > SNAPSHOT_LEN_MAX || HEADER_LEN as u64 + payload_len != len {
        return Err(Error::Corrupt(format!(
            "a payload of {payload_len} bytes in a file of {len} (limit {SNAPSHOT_LEN_MAX})"
        )));
    }
    let mut payload = vec![0u8; payload_len as usize];
    f.read_at(HEADER_LEN as u64, &mut payload)?;
    if checksum(txid, &payload) != sum {
        return Err(Error::Corrupt(
            "the payload's checksum does not match".into(),
        ));
    }
    let tables = decode(&payload).ok_or_else(|| Error::Corrupt("a malformed payload".into()))?;
    Ok((txid, tables))
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_at_checked(4)?;
        self.0 = rest;
        Some(u32::from_le_bytes(head.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<Vec<u8>> {
        let n = self.u32()? as usize;
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head.to_vec())
    }
}

fn decode(payload: &[u8]) -> Option<Tables> {
    let mut r = Reader(payload);
    let mut tables = Tables::new();
    for _ in 0..r.u32()? {
        let name = r.bytes()?;
        let t = tables.entry(name).or_default();
        for _ in 0..r.u32()? {
            let k = r.bytes()?;
            t.insert(k, r.bytes()?);
        }
    }
    r.0.is_empty().then_some(tables)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::io;

    struct Mem(RefCell<Vec<u8>>);
    impl File for Mem {
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
            let b = self.0.borrow();
            let at = offset as usize;
            buf.copy_from_slice(&b[at..at + buf.len()]);
            Ok(())
        }
        fn write_at(&self, _: u64, _: &[u8]) -> io::Result<()> {
            unreachable!()
        }
        fn sync(&self) -> io::Result<()> {
            Ok(())
        }
        fn len(&self) -> io::Result<u64> {
            Ok(self.0.borrow().len() as u64)
        }
        fn set_len(&self, _: u64) -> io::Result<()> {
            unreachable!()
        }
    }

    #[test]
    fn a_snapshot_reads_back_and_any_damage_is_refused() {
        let mut tables = Tables::new();
        tables
            .entry(b"t".to_vec())
            .or_default()
            .insert(b"k".to_vec(), b"v".to_vec());
        let bytes = encode(7, &tables);
        let (txid, back) = read(&Mem(RefCell::new(bytes.clone()))).unwrap();
        assert_eq!((txid, back), (7, tables));
        for cut in [0, 8, HEADER_LEN, bytes.len() - 1] {
            let short = Mem(RefCell::new(bytes[..cut].to_vec()));
            assert!(
                matches!(read(&short), Err(Error::Corrupt(_))),
                "cut at {cut}"
            );
        }
        for at in [0, 9, 17, 25, HEADER_LEN + 2, bytes.len() - 1] {
            let mut b = bytes.clone();
            b[at] ^= 0x40;
            let r = read(&Mem(RefCell::new(b)));
            assert!(matches!(r, Err(Error::Corrupt(_))), "flip at {at}");
        }
    }
}
