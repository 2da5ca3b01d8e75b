//! Per-metric summaries: coverage beside every mean, and a reproducible
//! bootstrap confidence interval.

use crate::outcome::{FailureKind, Outcome, OutcomeRecord, Status};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bootstrap resamples for the confidence interval.
pub const BOOTSTRAP_RESAMPLES: usize = 1000;
/// Seed of the bootstrap's SplitMix64 generator, fixed so that the same
/// scores always give the same interval.
pub const BOOTSTRAP_SEED: u64 = 0;
/// Above this many scores the interval uses the normal approximation
/// (mean ± 1.96 standard errors): the bootstrap would cost
/// resamples × n draws and agrees with it closely at that size.
pub const BOOTSTRAP_MAX_N: usize = 100_000;

/// Collects the outcomes of one metric output in bounded memory: running
/// moments always, the values themselves only while the bootstrap may
/// still need them (up to [`BOOTSTRAP_MAX_N`]).
#[derive(Clone, Debug)]
pub struct Accumulator {
    values: Option<Vec<f64>>,
    n: u64,
    sum: f64,
    /// Welford's running mean and sum of squared deviations.
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
    skipped: u64,
    failed: BTreeMap<FailureKind, u64>,
}

impl Default for Accumulator {
    fn default() -> Self {
        Accumulator {
            values: Some(Vec::new()),
            n: 0,
            sum: 0.0,
            mean: 0.0,
            m2: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            skipped: 0,
            failed: BTreeMap::new(),
        }
    }
}

impl Accumulator {
    pub fn add(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Scored { value, .. } => self.add_value(*value),
            Outcome::Skipped(_) => self.skipped += 1,
            Outcome::Failed(f) => *self.failed.entry(f.kind).or_default() += 1,
        }
    }

    /// Adds an outcome read back from `results.jsonl` (a resumed or merged
    /// run): the same counts as [`Accumulator::add`] of the outcome that
    /// wrote it. [`crate::read_results`] refuses records whose status and
    /// fields disagree; should one get here, it counts as an `input` failure.
    pub fn add_record(&mut self, record: &OutcomeRecord) {
        match (record.status, record.value) {
            (Status::Scored, Some(v)) => self.add_value(v),
            (Status::Skipped, _) => self.skipped += 1,
            (Status::Failed, _) | (Status::Scored, None) => {
                let kind = record.error.as_ref().map_or(FailureKind::Input, |e| e.kind);
                *self.failed.entry(kind).or_default() += 1
            }
        }
    }

    /// Outcomes counted so far, by status: cheap enough for a progress line
    /// (no statistics are computed).
    pub fn coverage(&self) -> Coverage {
        Coverage {
            scored: self.n,
            skipped: self.skipped,
            failed: self.failed.values().sum(),
        }
    }

    fn add_value(&mut self, v: f64) {
        self.n += 1;
        self.sum += v;
        let delta = v - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (v - self.mean);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        if let Some(values) = &mut self.values {
            if values.len() < BOOTSTRAP_MAX_N {
                values.push(v);
            } else {
                self.values = None;
            }
        }
    }

    pub fn summary(&self) -> Summary {
        let ci95 = (self.n > 0).then(|| match &self.values {
            Some(values) => bootstrap(values),
            None => self.normal(),
        });
        self.summary_with(ci95)
    }

    /// The summaries of several outputs, each equal to its own
    /// [`Accumulator::summary`]. Outputs bootstrapped over as many values
    /// draw the same resamples (the seed is fixed), so one draw of them
    /// serves all: the ROUGE family's outputs share one instead of
    /// drawing it once each.
    pub fn summaries(accumulators: &[&Accumulator]) -> Vec<Summary> {
        let mut intervals: Vec<Option<Interval>> = vec![None; accumulators.len()];
        let mut by_n: BTreeMap<u64, Vec<(usize, &[f64])>> = BTreeMap::new();
        for (i, a) in accumulators.iter().enumerate().filter(|(_, a)| a.n > 0) {
            match &a.values {
                Some(values) => by_n.entry(a.n).or_default().push((i, values)),
                None => intervals[i] = Some(a.normal()),
            }
        }
        for group in by_n.values() {
            let columns: Vec<&[f64]> = group.iter().map(|(_, v)| *v).collect();
            for ((i, _), interval) in group.iter().zip(bootstraps(&columns)) {
                intervals[*i] = Some(interval);
            }
        }
        accumulators
            .iter()
            .zip(intervals)
            .map(|(a, ci95)| a.summary_with(ci95))
            .collect()
    }

    fn mean_std(&self) -> (f64, f64) {
        let mean = self.sum / self.n as f64;
        (mean, (self.m2 / self.n as f64).max(0.0).sqrt())
    }

    fn normal(&self) -> Interval {
        let (mean, std) = self.mean_std();
        normal(mean, std, self.n)
    }

    /// The summary with its interval, which there is when something was
    /// scored.
    fn summary_with(&self, ci95: Option<Interval>) -> Summary {
        let stats = ci95.map(|ci95| {
            let (mean, std) = self.mean_std();
            Stats {
                mean,
                std,
                ci95,
                min: self.min,
                max: self.max,
            }
        });
        Summary {
            n_scored: self.n,
            n_skipped: self.skipped,
            n_failed: self.failed.values().sum(),
            failed_by_kind: self
                .failed
                .iter()
                .map(|(k, n)| (k.name().to_string(), *n))
                .collect(),
            stats,
        }
    }
}

/// Outcomes by status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    pub scored: u64,
    pub skipped: u64,
    pub failed: u64,
}

impl std::ops::AddAssign for Coverage {
    fn add_assign(&mut self, other: Coverage) {
        self.scored += other.scored;
        self.skipped += other.skipped;
        self.failed += other.failed;
    }
}

/// Counts and, when anything was scored, statistics of one metric output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n_scored: u64,
    pub n_skipped: u64,
    pub n_failed: u64,
    pub failed_by_kind: BTreeMap<String, u64>,
    /// Absent when nothing was scored: no number rather than NaN.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub stats: Option<Stats>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub mean: f64,
    /// Population standard deviation (ddof = 0, numpy's default).
    pub std: f64,
    pub ci95: Interval,
    pub min: f64,
    pub max: f64,
}

/// A 95% confidence interval for the mean and how it was computed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    pub method: IntervalMethod,
}

/// How a confidence interval was computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// Percentile bootstrap, [`BOOTSTRAP_RESAMPLES`] resamples, seed
    /// [`BOOTSTRAP_SEED`].
    Bootstrap,
    /// Mean ± 1.96 standard errors.
    Normal,
}

fn normal(mean: f64, std: f64, n: u64) -> Interval {
    let half = 1.96 * std / (n as f64).sqrt();
    Interval {
        low: mean - half,
        high: mean + half,
        method: IntervalMethod::Normal,
    }
}

/// How two runs differ on the samples they share, with a paired
/// bootstrap interval: the resamples draw whole samples, keeping each
/// sample's two values together, so what the samples share cancels out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairedDifference {
    /// Shared samples.
    pub n: u64,
    pub mean_a: f64,
    pub mean_b: f64,
    /// `mean_b - mean_a`.
    pub diff: f64,
    /// 95% interval of `diff`: the percentile bootstrap of the mean of the
    /// per-sample differences (same resamples and seed as the summary's
    /// interval; the normal approximation above [`BOOTSTRAP_MAX_N`] pairs).
    pub ci95: Interval,
}

/// The paired difference of `(a, b)` values, one pair per shared sample;
/// `None` for no pairs.
///
/// ```
/// let d = assay_core::aggregate::paired_difference(&[(0.5, 0.75), (0.25, 0.5)]).unwrap();
/// assert_eq!((d.n, d.mean_a, d.mean_b, d.diff), (2, 0.375, 0.625, 0.25));
/// // Every sample moved by 0.25, so every resample does too.
/// assert_eq!((d.ci95.low, d.ci95.high), (0.25, 0.25));
/// ```
pub fn paired_difference(pairs: &[(f64, f64)]) -> Option<PairedDifference> {
    if pairs.is_empty() {
        return None;
    }
    let n = pairs.len() as f64;
    let mean_a = pairs.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_b = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let diffs: Vec<f64> = pairs.iter().map(|(a, b)| b - a).collect();
    let diff = diffs.iter().sum::<f64>() / n;
    let ci95 = if diffs.len() > BOOTSTRAP_MAX_N {
        let var = diffs.iter().map(|d| (d - diff).powi(2)).sum::<f64>() / n;
        normal(diff, var.sqrt(), diffs.len() as u64)
    } else {
        bootstrap(&diffs)
    };
    Some(PairedDifference {
        n: pairs.len() as u64,
        mean_a,
        mean_b,
        diff,
        ci95,
    })
}

/// The percentile bootstrap of the mean. The values are sorted first so
/// that the interval depends on the scores, not on the order they arrived
/// in (judged samples complete in any order; resumed and merged runs read
/// them back in yet another).
fn bootstrap(values: &[f64]) -> Interval {
    bootstraps(&[values]).remove(0)
}

/// [`bootstrap`] of each of `columns`, which hold as many values: the
/// resamples' positions are drawn once for up to four of them, each
/// column's sums taken in the same order as its own bootstrap takes them.
fn bootstraps(columns: &[&[f64]]) -> Vec<Interval> {
    let sorted: Vec<Vec<f64>> = columns
        .iter()
        .map(|c| {
            let mut v = c.to_vec();
            v.sort_by(f64::total_cmp);
            v
        })
        .collect();
    let n = sorted.first().map_or(0, Vec::len);
    let mut means: Vec<Vec<f64>> = Vec::with_capacity(sorted.len());
    for chunk in sorted.chunks(LANES) {
        let lane = |k: usize| &chunk.get(k).unwrap_or(&chunk[0])[..n];
        let rows: Vec<Lanes> = (0..n)
            .map(|j| Lanes([lane(0)[j], lane(1)[j], lane(2)[j], lane(3)[j]]))
            .collect();
        let mut of_chunk = vec![Vec::with_capacity(BOOTSTRAP_RESAMPLES); chunk.len()];
        for sums in resamples_sums(&rows, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED) {
            for (m, sum) in of_chunk.iter_mut().zip(sums) {
                m.push(sum / n as f64);
            }
        }
        means.extend(of_chunk);
    }
    means
        .into_iter()
        .map(|mut means| {
            means.sort_by(f64::total_cmp);
            Interval {
                low: percentile(&means, 2.5),
                high: percentile(&means, 97.5),
                method: IntervalMethod::Bootstrap,
            }
        })
        .collect()
}

/// Columns whose sums are taken side by side.
const LANES: usize = 4;

/// One position's values of the four columns, aligned to their size so
/// that a drawn position never loads across two cache lines.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Lanes([f64; LANES]);

/// Resamples summed side by side: their chains of additions overlap
/// instead of waiting on one another.
const INTERLEAVED: usize = 4;
/// Draws whose positions are made at once, before they are summed.
const BLOCK: usize = 256;
// Positions are drawn in 32 bits (`SplitMix64::positions_from`).
const _: () = assert!((BOOTSTRAP_MAX_N as u64) < 1 << 32);

/// The sums of `resamples` resamples of four columns of `n` values, stored
/// row by row so that a drawn position is one cache line, not four. Each
/// resample draws its `n` positions from SplitMix64 seeded with `seed`
/// (`below(n)`, one resample after another) and sums each column in the
/// order drawn: exactly what that loop gives, bit for bit. Faster because
/// SplitMix64's output at any step is a pure function of the step, so
/// positions are made many at once, without a chain from one draw to the
/// next, and several resamples are summed together: with AVX-512 (64-bit
/// vector multiplication, found at run time) eight, one per lane; elsewhere
/// four, from blocks of positions that the compiler vectorises as it can.
fn resamples_sums(rows: &[Lanes], resamples: usize, seed: u64) -> Vec<[f64; LANES]> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512dq")
    {
        // SAFETY: the features it is compiled for were just found.
        return unsafe { resamples_sums_avx512(rows, resamples, seed) };
    }
    resamples_sums_with(rows, resamples, seed)
}

/// [`resamples_sums_with`]'s sums, eight resamples at a time: the
/// generator's state for each sits in one lane of a vector, so a step
/// makes the positions of all eight at once, and a few steps' positions
/// are summed right after they are made, so that making them overlaps
/// with the loads of the rows (made in long blocks first, the two took
/// turns). Each resample still adds its rows in the order drawn.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn resamples_sums_avx512(rows: &[Lanes], resamples: usize, seed: u64) -> Vec<[f64; LANES]> {
    use std::arch::x86_64::*;
    /// Resamples drawn side by side, one per 64-bit lane.
    const WIDE: usize = 8;
    /// Steps whose positions are made before they are summed.
    const STEPS: usize = 16;
    let n = rows.len();
    let splat = |v: u64| _mm512_set1_epi64(v as i64);
    let (gamma, n_lanes) = (splat(SplitMix64::GAMMA), splat(n as u64));
    let (m1, m2) = (splat(SplitMix64::M1), splat(SplitMix64::M2));
    let mut out = Vec::with_capacity(resamples);
    let mut positions = [0u32; WIDE * STEPS];
    for first in (0..resamples).step_by(WIDE) {
        // Lane r holds resample `first + r`'s state before its first draw.
        let starts: [u64; WIDE] = std::array::from_fn(|r| {
            seed.wrapping_add((((first + r) * n) as u64).wrapping_mul(SplitMix64::GAMMA))
        });
        // SAFETY: `starts` is 64 bytes, read unaligned.
        let mut state = unsafe { _mm512_loadu_si512(starts.as_ptr().cast()) };
        let mut sums = [_mm256_setzero_pd(); WIDE];
        for done in (0..n).step_by(STEPS) {
            let steps = STEPS.min(n - done);
            let (made, _) = positions.as_chunks_mut::<WIDE>();
            for step in made.iter_mut().take(steps) {
                state = _mm512_add_epi64(state, gamma);
                // SplitMix64::mix, then `below(n)` in 32-bit halves, as
                // `positions_from` takes them.
                let z = _mm512_xor_si512(state, _mm512_srli_epi64(state, 30));
                let z = _mm512_mullo_epi64(z, m1);
                let z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)), m2);
                let z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
                let high = _mm512_mul_epu32(_mm512_srli_epi64(z, 32), n_lanes);
                let low = _mm512_srli_epi64(_mm512_mul_epu32(z, n_lanes), 32);
                let below = _mm512_srli_epi64(_mm512_add_epi64(high, low), 32);
                // SAFETY: `step` is eight u32, 32 bytes, written unaligned.
                unsafe {
                    _mm256_storeu_si256(step.as_mut_ptr().cast(), _mm512_cvtepi64_epi32(below))
                };
            }
            // SAFETY: `below(n)` is below n: high * n + carry < 2^32 * n.
            unsafe { sums_add_rows(&mut sums, rows, &positions.as_chunks::<WIDE>().0[..steps]) };
        }
        for sum in &sums[..WIDE.min(resamples - first)] {
            let mut lanes = [0.0; LANES];
            // SAFETY: `lanes` is four f64, written unaligned.
            unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), *sum) };
            out.push(lanes);
        }
    }
    out
}

/// Adds to each of the eight sums its resample's rows at `positions`,
/// step by step. The sums are taken into eight locals for the loop and
/// written back after it, so that they stay in registers: indexed in an
/// array within the loop that also makes the positions, they were loaded
/// and stored at every addition (the release build's loop is eight
/// `vaddpd` into ymm registers, with no store).
///
/// # Safety
/// Every position must be below `rows.len()` (rows are read unchecked).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn sums_add_rows(
    sums: &mut [std::arch::x86_64::__m256d; 8],
    rows: &[Lanes],
    positions: &[[u32; 8]],
) {
    use std::arch::x86_64::*;
    let [mut s0, mut s1, mut s2, mut s3, mut s4, mut s5, mut s6, mut s7] = *sums;
    macro_rules! add {
        ($sum:ident, $p:ident) => {
            // SAFETY: each position is below rows.len() (the caller's
            // promise), and `Lanes` is four f64 aligned to 32 bytes.
            $sum = _mm256_add_pd($sum, unsafe {
                _mm256_load_pd(rows.get_unchecked($p as usize).0.as_ptr())
            })
        };
    }
    for &[p0, p1, p2, p3, p4, p5, p6, p7] in positions {
        add!(s0, p0);
        add!(s1, p1);
        add!(s2, p2);
        add!(s3, p3);
        add!(s4, p4);
        add!(s5, p5);
        add!(s6, p6);
        add!(s7, p7);
    }
    *sums = [s0, s1, s2, s3, s4, s5, s6, s7];
}

fn resamples_sums_with(rows: &[Lanes], resamples: usize, seed: u64) -> Vec<[f64; LANES]> {
    let n = rows.len();
    let mut out = Vec::with_capacity(resamples);
    let mut positions = [[0u32; BLOCK]; INTERLEAVED];
    for first in (0..resamples).step_by(INTERLEAVED) {
        let group = INTERLEAVED.min(resamples - first);
        let mut sums = [[0.0; LANES]; INTERLEAVED];
        for done in (0..n).step_by(BLOCK) {
            let len = BLOCK.min(n - done);
            for (k, block) in positions.iter_mut().enumerate().take(group) {
                let step = ((first + k) * n + done) as u64;
                SplitMix64::positions_from(seed, step, n, &mut block[..len]);
            }
            let [p0, p1, p2, p3] = &positions;
            // Already below n: the bound lets the compiler drop the index
            // check.
            let row = |p: &u32| rows[(*p as usize).min(n - 1)].0;
            // Carried by value, so that the sums stay in registers.
            sums = p0[..len]
                .iter()
                .zip(&p1[..len])
                .zip(&p2[..len])
                .zip(&p3[..len])
                .fold(sums, |[a, b, c, d], (((x, y), z), w)| {
                    [
                        plus(a, row(x)),
                        plus(b, row(y)),
                        plus(c, row(z)),
                        plus(d, row(w)),
                    ]
                });
        }
        out.extend_from_slice(&sums[..group]);
    }
    out
}

#[inline(always)]
fn plus(sums: [f64; LANES], row: [f64; LANES]) -> [f64; LANES] {
    [
        sums[0] + row[0],
        sums[1] + row[1],
        sums[2] + row[2],
        sums[3] + row[3],
    ]
}

/// numpy's default (linear) percentile of sorted values.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let pos = q / 100.0 * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// SplitMix64: tiny, fast, and fully specified, so intervals reproduce
/// across platforms and versions.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
    const M1: u64 = 0xBF58_476D_1CE4_E5B9;
    const M2: u64 = 0x94D0_49BB_1331_11EB;

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(Self::GAMMA);
        Self::mix(self.0)
    }

    #[inline(always)]
    fn mix(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(Self::M1);
        z = (z ^ (z >> 27)).wrapping_mul(Self::M2);
        z ^ (z >> 31)
    }

    /// `below(n)` of the generator seeded with `seed`, for the draws after
    /// the first `step`, one per element of `out`: what that many calls
    /// give, without a chain from one to the next. `n` must be below
    /// 2^32, which lets the 128-bit product of [`below`](Self::below) be
    /// taken in 32-bit halves (exactly: the low half's carry is all that
    /// reaches the top).
    #[inline(always)]
    fn positions_from(seed: u64, step: u64, n: usize, out: &mut [u32]) {
        // Held in 32 bits so that the compiler multiplies the halves as
        // 32-bit numbers (one instruction, where 64-bit lanes take three).
        let n = u64::from(n as u32);
        let start = seed.wrapping_add(step.wrapping_mul(Self::GAMMA));
        for (j, p) in out.iter_mut().enumerate() {
            let z = Self::mix(start.wrapping_add((j as u64 + 1).wrapping_mul(Self::GAMMA)));
            let (high, low) = (u64::from((z >> 32) as u32), u64::from(z as u32));
            *p = ((high * n + ((low * n) >> 32)) >> 32) as u32;
        }
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below 2^-40
    /// for any n a dataset can have).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Uniform in [0, 1): the top 53 bits as a double.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{Failure, SkipReason};
    use crate::Field;
    use serde_json::json;

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // First outputs of SplitMix64 seeded with 0, from Vigna's reference C code.
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn percentile_is_numpys_linear() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), 2.5);
        assert!((percentile(&v, 2.5) - 1.075).abs() < 1e-12);
    }

    #[test]
    fn summary_counts_and_stats() {
        let mut acc = Accumulator::default();
        for v in [0.0, 0.5, 1.0, 0.5] {
            acc.add(&Outcome::scored(v, json!({})));
        }
        acc.add(&Outcome::Skipped(SkipReason::MissingField(Field::Response)));
        acc.add(&Outcome::Failed(Failure {
            kind: FailureKind::Input,
            message: String::new(),
        }));
        let s = acc.summary();
        assert_eq!((s.n_scored, s.n_skipped, s.n_failed), (4, 1, 1));
        let mut twice = acc.coverage();
        twice += acc.coverage();
        assert_eq!(
            twice,
            Coverage {
                scored: 8,
                skipped: 2,
                failed: 2
            }
        );
        assert_eq!(s.failed_by_kind.get("input"), Some(&1));
        let st = s.stats.clone().unwrap();
        assert_eq!(st.mean, 0.5);
        assert!((st.std - 0.125f64.sqrt()).abs() < 1e-15);
        assert!(
            st.ci95.low < 0.5 && st.ci95.high > 0.5 && st.ci95.low >= 0.0 && st.ci95.high <= 1.0
        );
        assert_eq!((st.min, st.max), (0.0, 1.0));
        assert_eq!(acc.summary(), s, "the interval is reproducible");
    }

    #[test]
    fn the_interval_does_not_depend_on_arrival_order() {
        let values: Vec<f64> = (0..50).map(|i| ((i * 37) % 11) as f64 / 10.0).collect();
        let summary = |vals: &mut dyn Iterator<Item = &f64>| {
            let mut acc = Accumulator::default();
            for v in vals {
                acc.add(&Outcome::scored(*v, json!({})));
            }
            acc.summary().stats.unwrap().ci95
        };
        assert_eq!(
            summary(&mut values.iter()),
            summary(&mut values.iter().rev())
        );
    }

    #[test]
    fn records_count_like_the_outcomes_that_wrote_them() {
        let outcomes = [
            Outcome::scored(0.25, json!({})),
            Outcome::Skipped(SkipReason::NoContexts),
            Outcome::Failed(Failure {
                kind: FailureKind::Input,
                message: "x".into(),
            }),
        ];
        let (mut direct, mut read_back) = (Accumulator::default(), Accumulator::default());
        for o in &outcomes {
            direct.add(o);
            read_back.add_record(&OutcomeRecord::new("s", 1, "m", o.clone()));
        }
        assert_eq!(direct.summary(), read_back.summary());
    }

    #[test]
    fn the_paired_interval_resamples_pairs_not_runs() {
        // Scores spread widely across samples, each moved by about +0.1:
        // the pairs cancel the spread, so the interval is narrow and above 0.
        let pairs: Vec<(f64, f64)> = (0..40)
            .map(|i| {
                let a = (i % 10) as f64 / 10.0;
                (a, a * 0.9 + 0.1 + if i % 2 == 0 { 0.01 } else { -0.01 })
            })
            .collect();
        let d = paired_difference(&pairs).unwrap();
        let want: f64 = pairs.iter().map(|(a, b)| b - a).sum::<f64>() / 40.0;
        assert!((d.diff - want).abs() < 1e-12);
        assert!((d.diff - (d.mean_b - d.mean_a)).abs() < 1e-12);
        assert!(d.ci95.low <= d.diff && d.diff <= d.ci95.high, "{d:?}");
        assert!(d.ci95.low > 0.0, "{d:?}");
        let unpaired_a = {
            let mut acc = Accumulator::default();
            pairs
                .iter()
                .for_each(|p| acc.add(&Outcome::scored(p.0, json!({}))));
            acc.summary().stats.unwrap().ci95
        };
        assert!(d.ci95.high - d.ci95.low < (unpaired_a.high - unpaired_a.low) / 2.0);
        assert_eq!(paired_difference(&pairs), Some(d), "reproducible");
        assert_eq!(paired_difference(&[]), None);
    }

    #[test]
    fn positions_drawn_in_blocks_are_the_draws_one_at_a_time() {
        for n in [1usize, 2, 3, 17, 20_000, 100_000, u32::MAX as usize] {
            let mut rng = SplitMix64(11);
            let one_at_a_time: Vec<u32> = (0..1000).map(|_| rng.below(n) as u32).collect();
            let mut blocks = vec![0u32; 1000];
            let (head, tail) = blocks.split_at_mut(333);
            SplitMix64::positions_from(11, 0, n, head);
            SplitMix64::positions_from(11, 333, n, tail);
            assert_eq!(blocks, one_at_a_time, "n = {n}");
        }
    }

    #[test]
    fn resamples_summed_side_by_side_equal_the_plain_loop() {
        let mut rng = SplitMix64(3);
        // Sizes around the block, and resamples not a multiple of the
        // interleaving.
        for n in [1, 5, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 7] {
            let rows: Vec<Lanes> = (0..n)
                .map(|_| Lanes([rng.unit(), rng.unit() / 3.0, 1.0 / (1.0 + rng.unit()), 0.1]))
                .collect();
            let resamples = 2 * INTERLEAVED + 3;
            let mut plain = SplitMix64(BOOTSTRAP_SEED);
            let expected: Vec<[f64; LANES]> = (0..resamples)
                .map(|_| {
                    let mut sums = [0.0; LANES];
                    for _ in 0..n {
                        let row = rows[plain.below(n)].0;
                        for (s, v) in sums.iter_mut().zip(row) {
                            *s += v;
                        }
                    }
                    sums
                })
                .collect();
            let got = resamples_sums(&rows, resamples, BOOTSTRAP_SEED);
            let bits = |v: &[[f64; LANES]]| -> Vec<[u64; LANES]> {
                v.iter().map(|r| r.map(f64::to_bits)).collect()
            };
            assert_eq!(bits(&got), bits(&expected), "n = {n}");
            assert_eq!(
                bits(&resamples_sums_with(&rows, resamples, BOOTSTRAP_SEED)),
                bits(&expected)
            );
        }
    }

    #[test]
    fn outputs_summarised_together_equal_each_summarised_alone() {
        let mut rng = SplitMix64(7);
        // Six of one size: two passes of four lanes.
        let accs: Vec<Accumulator> = [40, 40, 17, 40, 0, 40, 40, 40]
            .iter()
            .map(|&n| {
                let mut a = Accumulator::default();
                for _ in 0..n {
                    // Whole zeros and ones among the fractions, as scores have.
                    let v = (rng.unit() * 4.0).floor() / 3.0;
                    a.add_value(v.min(1.0) * rng.unit().max(0.5));
                }
                a
            })
            .collect();
        let together = Accumulator::summaries(&accs.iter().collect::<Vec<_>>());
        let alone: Vec<Summary> = accs.iter().map(Accumulator::summary).collect();
        assert_eq!(together, alone);
        assert!(together[4].stats.is_none());
        assert_ne!(together[0].stats, together[1].stats);
    }

    #[test]
    fn nothing_scored_gives_no_statistics() {
        let mut acc = Accumulator::default();
        acc.add(&Outcome::Skipped(SkipReason::MissingField(Field::Response)));
        let v = serde_json::to_value(acc.summary()).unwrap();
        assert_eq!(
            v,
            json!({"n_scored": 0, "n_skipped": 1, "n_failed": 0, "failed_by_kind": {}})
        );
    }

    #[test]
    fn large_inputs_use_the_normal_interval_and_keep_no_values() {
        let mut acc = Accumulator::default();
        let n = BOOTSTRAP_MAX_N + 1;
        for i in 0..n {
            acc.add(&Outcome::scored((i % 2) as f64, json!(null)));
        }
        assert!(
            acc.values.is_none(),
            "values are dropped past the bootstrap limit"
        );
        let st = acc.summary().stats.unwrap();
        assert_eq!(st.ci95.method, IntervalMethod::Normal);
        let want_std = (0.25f64 - 1.0 / (4.0 * (n * n) as f64)).sqrt();
        assert!(
            (st.std - want_std).abs() < 1e-12,
            "{} vs {want_std}",
            st.std
        );
        assert!(
            (st.ci95.high - st.ci95.low - 2.0 * 1.96 * st.std / (n as f64).sqrt()).abs() < 1e-12
        );
    }
}
