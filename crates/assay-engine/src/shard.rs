//! Shards: `--shard K/N` scores a deterministic slice of the dataset (one
//! of N machines); [`crate::merge`] combines the shards' run directories.
//!
//! A row belongs to shard K (1-based) iff the FNV-1a 64-bit hash of its
//! sample id's UTF-8 bytes, modulo N, is K - 1. FNV-1a is fixed by its
//! definition (offset basis 0xcbf29ce484222325, prime 0x100000001b3), so
//! the slices are the same on every platform and in every version. A row
//! that could not be read has its row number as id, as in `results.jsonl`.

use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count`, 1-based: `--shard 2/3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub(crate) index: u64,
    pub(crate) count: u64,
}

impl Shard {
    /// Whether the row with this sample id belongs to the shard.
    pub fn holds(&self, sample_id: &str) -> bool {
        fnv1a64(sample_id.as_bytes()) % self.count == self.index - 1
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s}: expected K/N with 1 <= K <= N, e.g. 2/3");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.trim().parse::<u64>().map_err(|_| bad())?,
            n.trim().parse::<u64>().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_its_published_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn every_id_is_in_exactly_one_shard() {
        let shards: Vec<Shard> = ["1/3", "2/3", "3/3"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let mut sizes = [0usize; 3];
        for i in 0..3000 {
            let id = format!("q{i}");
            let holders: Vec<usize> = (0..3).filter(|&k| shards[k].holds(&id)).collect();
            assert_eq!(holders.len(), 1, "{id}");
            sizes[holders[0]] += 1;
        }
        // FNV-1a spreads sequential ids: no shard is empty or holds most rows.
        assert!(sizes.iter().all(|&n| n > 800), "{sizes:?}");
    }

    #[test]
    fn shards_parse_and_print_back() {
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!(s.to_string(), "2/3");
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "-1/2"] {
            let err = bad.parse::<Shard>().unwrap_err();
            assert!(err.contains("expected K/N"), "{bad}: {err}");
        }
    }
}
