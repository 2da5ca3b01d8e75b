//! Agreement between a judge's scores and human labels, and the prevalence
//! a calibrated binary judgement implies: pure statistics, no I/O.
//!
//! - Binary labels: a [`Confusion`] of thresholded scores (accuracy,
//!   balanced accuracy, precision, recall, specificity, F1, Cohen's kappa)
//!   and [`roc_auc`] of the continuous score (ties count half). The
//!   threshold is chosen on one half of the items ([`half_of`], by SHA-256
//!   of the id) with [`best_threshold`] and evaluated on the other.
//! - Graded labels: [`spearman`] (average ranks for ties) and
//!   [`kendall_tau_b`].
//! - Pairwise preferences: [`preference_agreement`] of the judge's sign with
//!   each annotator's, and [`annotator_agreement`] between annotators.
//! - Intervals: [`bootstrap`] resamples items (pairs, for preferences) with
//!   the same seeded SplitMix64 and percentile as the summary's interval.
//! - [`corrected_prevalence`]: Rogan-Gladen with a parametric bootstrap
//!   interval that carries the calibration's own uncertainty.
//!
//! A statistic that has no value (one class only, constant scores, a
//! denominator of zero) is an [`Undefined`] saying why, never NaN.

use assay_core::aggregate::{percentile, SplitMix64, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Why a statistic has no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Undefined {
    /// Nothing to compute it on.
    NoItems,
    /// Every label is of one class.
    OneClass,
    /// Nothing was predicted positive (precision).
    NoPredictedPositive,
    /// No item is positive, actually or predicted (F1).
    NoPositives,
    /// Every score is the same.
    ConstantScores,
    /// Every label is the same.
    ConstantLabels,
    /// Chance agreement is 1 (kappa).
    ChanceAgreementIsOne,
    /// Sensitivity + specificity <= 1: the judgement is no better than
    /// chance, so it cannot be inverted (Rogan-Gladen).
    NotInformative,
    /// No pair has a decisive (non-zero) preference to agree with.
    NoDecisivePreference,
}

impl std::fmt::Display for Undefined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Undefined::NoItems => "undefined because there are no items",
            Undefined::OneClass => "undefined because every label is of one class",
            Undefined::NoPredictedPositive => "undefined because nothing was predicted positive",
            Undefined::NoPositives => {
                "undefined because no item is positive, actually or predicted"
            }
            Undefined::ConstantScores => "undefined because every score is the same",
            Undefined::ConstantLabels => "undefined because every label is the same",
            Undefined::ChanceAgreementIsOne => "undefined because chance agreement is 1",
            Undefined::NotInformative => {
                "undefined because sensitivity + specificity <= 1 (no better than chance)"
            }
            Undefined::NoDecisivePreference => {
                "undefined because no preference is decisive (all are 0)"
            }
        })
    }
}

/// A statistic, or why it has none.
pub type Stat = Result<f64, Undefined>;

/// A 95% percentile-bootstrap interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Ci {
    pub low: f64,
    pub high: f64,
    /// Resamples whose statistic was defined (of [`BOOTSTRAP_RESAMPLES`]);
    /// the percentiles are taken over these.
    pub resamples: usize,
}

/// A statistic with its interval (none when it is undefined, or when no
/// resample defines it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub value: Stat,
    pub ci95: Option<Ci>,
}

/// Counts of a binary prediction against a binary truth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confusion {
    pub tp: u64,
    pub fp: u64,
    pub tn: u64,
    #[serde(rename = "fn")]
    pub fn_: u64,
}

fn ratio(num: u64, den: u64, why: Undefined) -> Stat {
    if den == 0 {
        Err(why)
    } else {
        Ok(num as f64 / den as f64)
    }
}

impl Confusion {
    /// Counts `(predicted, actual)` pairs.
    pub fn count(pairs: impl IntoIterator<Item = (bool, bool)>) -> Confusion {
        let mut c = Confusion::default();
        for pair in pairs {
            match pair {
                (true, true) => c.tp += 1,
                (true, false) => c.fp += 1,
                (false, false) => c.tn += 1,
                (false, true) => c.fn_ += 1,
            }
        }
        c
    }

    pub fn n(&self) -> u64 {
        self.tp + self.fp + self.tn + self.fn_
    }

    pub fn accuracy(&self) -> Stat {
        ratio(self.tp + self.tn, self.n(), Undefined::NoItems)
    }

    /// Recall: true positives / actual positives.
    pub fn sensitivity(&self) -> Stat {
        ratio(self.tp, self.tp + self.fn_, Undefined::OneClass)
    }

    /// True negatives / actual negatives.
    pub fn specificity(&self) -> Stat {
        ratio(self.tn, self.tn + self.fp, Undefined::OneClass)
    }

    pub fn precision(&self) -> Stat {
        ratio(self.tp, self.tp + self.fp, Undefined::NoPredictedPositive)
    }

    /// The mean of sensitivity and specificity.
    pub fn balanced_accuracy(&self) -> Stat {
        Ok((self.sensitivity()? + self.specificity()?) / 2.0)
    }

    /// 2TP / (2TP + FP + FN).
    pub fn f1(&self) -> Stat {
        ratio(
            2 * self.tp,
            2 * self.tp + self.fp + self.fn_,
            Undefined::NoPositives,
        )
    }

    /// Cohen's kappa: (observed - chance agreement) / (1 - chance).
    pub fn kappa(&self) -> Stat {
        let n = self.n() as f64;
        if n == 0.0 {
            return Err(Undefined::NoItems);
        }
        let observed = (self.tp + self.tn) as f64 / n;
        let pred_pos = (self.tp + self.fp) as f64 / n;
        let actual_pos = (self.tp + self.fn_) as f64 / n;
        let chance = pred_pos * actual_pos + (1.0 - pred_pos) * (1.0 - actual_pos);
        if chance >= 1.0 {
            return Err(Undefined::ChanceAgreementIsOne);
        }
        Ok((observed - chance) / (1.0 - chance))
    }
}

/// Average ranks (1-based; tied values share the mean of their ranks).
fn average_ranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut ranks = vec![0.0; x.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && x[order[end]] == x[order[start]] {
            end += 1;
        }
        // Ranks start+1 ..= end, averaged.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        start = end;
    }
    ranks
}

/// The area under the ROC curve of `scores` for `positive` (a higher score
/// should mean positive): the probability that a random positive scores
/// above a random negative, ties counting half (Mann-Whitney U).
pub fn roc_auc(scores: &[f64], positive: &[bool]) -> Stat {
    let n_pos = positive.iter().filter(|p| **p).count();
    let n_neg = positive.len() - n_pos;
    if positive.is_empty() {
        return Err(Undefined::NoItems);
    }
    if n_pos == 0 || n_neg == 0 {
        return Err(Undefined::OneClass);
    }
    let ranks = average_ranks(scores);
    let rank_sum: f64 = ranks
        .iter()
        .zip(positive)
        .filter(|(_, p)| **p)
        .map(|(r, _)| r)
        .sum();
    let u = rank_sum - (n_pos * (n_pos + 1)) as f64 / 2.0;
    Ok(u / (n_pos * n_neg) as f64)
}

fn pearson(x: &[f64], y: &[f64]) -> Stat {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 {
        return Err(Undefined::ConstantScores);
    }
    if syy == 0.0 {
        return Err(Undefined::ConstantLabels);
    }
    Ok(sxy / (sxx * syy).sqrt())
}

/// Spearman's rank correlation of scores `x` with labels `y`: Pearson's
/// correlation of their average ranks (scipy `spearmanr`).
pub fn spearman(x: &[f64], y: &[f64]) -> Stat {
    if x.is_empty() {
        return Err(Undefined::NoItems);
    }
    pearson(&average_ranks(x), &average_ranks(y))
}

/// Kendall's tau-b of scores `x` with labels `y` (scipy `kendalltau`'s
/// default): (concordant - discordant) / sqrt((n0 - ties in x) (n0 - ties
/// in y)) over all n0 pairs. Quadratic: calibration sets are small.
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Stat {
    if x.is_empty() {
        return Err(Undefined::NoItems);
    }
    let (mut concordant, mut discordant, mut tied_x, mut tied_y, mut pairs) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            pairs += 1;
            let dx = x[i].total_cmp(&x[j]);
            let dy = y[i].total_cmp(&y[j]);
            if x[i] == x[j] {
                tied_x += 1;
            }
            if y[i] == y[j] {
                tied_y += 1;
            }
            if x[i] != x[j] && y[i] != y[j] {
                if dx == dy {
                    concordant += 1;
                } else {
                    discordant += 1;
                }
            }
        }
    }
    if pairs == tied_x {
        return Err(Undefined::ConstantScores);
    }
    if pairs == tied_y {
        return Err(Undefined::ConstantLabels);
    }
    let den = ((pairs - tied_x) as f64 * (pairs - tied_y) as f64).sqrt();
    Ok((concordant as f64 - discordant as f64) / den)
}

/// One pair of responses (a, b): the judge's score difference b - a and
/// each annotator's preference (> 0: b is better; 0: no preference).
#[derive(Clone, Debug, PartialEq)]
pub struct Preference {
    pub judge: f64,
    pub annotators: Vec<f64>,
}

/// The rate at which the judge's sign agrees with each decisive annotator
/// label, over all (pair, annotator) with a non-zero preference; a judge
/// tie (equal scores) counts half.
pub fn preference_agreement(pairs: &[Preference]) -> Stat {
    let (mut agree, mut n) = (0.0, 0u64);
    for p in pairs {
        for &a in p.annotators.iter().filter(|a| **a != 0.0) {
            n += 1;
            agree += if p.judge == 0.0 {
                0.5
            } else if (p.judge > 0.0) == (a > 0.0) {
                1.0
            } else {
                0.0
            };
        }
    }
    if n == 0 {
        return Err(Undefined::NoDecisivePreference);
    }
    Ok(agree / n as f64)
}

/// The rate at which two annotators of a pair give the same sign, over
/// every two annotators of a pair who are both decisive.
pub fn annotator_agreement(pairs: &[Preference]) -> Stat {
    let (mut agree, mut n) = (0u64, 0u64);
    for p in pairs {
        let decisive: Vec<f64> = p.annotators.iter().copied().filter(|a| *a != 0.0).collect();
        for i in 0..decisive.len() {
            for j in i + 1..decisive.len() {
                n += 1;
                agree += u64::from((decisive[i] > 0.0) == (decisive[j] > 0.0));
            }
        }
    }
    ratio(agree, n, Undefined::NoDecisivePreference)
}

/// `stat` with a 95% percentile-bootstrap interval: [`BOOTSTRAP_RESAMPLES`]
/// resamples of `items` with replacement, SplitMix64 seeded with
/// [`BOOTSTRAP_SEED`]. Resamples where the statistic is undefined (e.g.
/// one class drawn) are left out and counted in [`Ci::resamples`]. The
/// resamples follow the order of `items`: give them in a fixed order (by
/// id) for the interval to reproduce.
pub fn bootstrap<T: Clone>(items: &[T], stat: impl Fn(&[T]) -> Stat) -> Estimate {
    let value = stat(items);
    if value.is_err() {
        return Estimate { value, ci95: None };
    }
    let mut rng = SplitMix64(BOOTSTRAP_SEED);
    let mut sample: Vec<T> = Vec::with_capacity(items.len());
    let mut values: Vec<f64> = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        sample.clear();
        sample.extend((0..items.len()).map(|_| items[rng.below(items.len())].clone()));
        if let Ok(v) = stat(&sample) {
            values.push(v);
        }
    }
    Estimate {
        value,
        ci95: interval(values),
    }
}

fn interval(mut values: Vec<f64>) -> Option<Ci> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(Ci {
        low: percentile(&values, 2.5),
        high: percentile(&values, 97.5),
        resamples: values.len(),
    })
}

/// Which half of a calibration set an item is in: the threshold is chosen
/// on one and evaluated on the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Half {
    /// Where the threshold is chosen.
    Tune,
    /// Where it is evaluated.
    Evaluate,
}

/// The half of item `id`: the low bit of the first byte of SHA-256(id), so
/// the split is fixed by the ids alone, whatever their order or subset.
pub fn half_of(id: &str) -> Half {
    if Sha256::digest(id.as_bytes())[0] & 1 == 0 {
        Half::Tune
    } else {
        Half::Evaluate
    }
}

/// The threshold `t` (predict positive when score >= t) with the best
/// balanced accuracy on these items; the lowest of equally good ones. The
/// candidates are the distinct scores.
pub fn best_threshold(scores: &[f64], positive: &[bool]) -> Stat {
    let n_pos = positive.iter().filter(|p| **p).count() as u128;
    let n_neg = positive.len() as u128 - n_pos;
    if positive.is_empty() {
        return Err(Undefined::NoItems);
    }
    if n_pos == 0 || n_neg == 0 {
        return Err(Undefined::OneClass);
    }
    let mut candidates: Vec<f64> = scores.to_vec();
    candidates.sort_by(f64::total_cmp);
    candidates.dedup();
    // Balanced accuracy compared exactly, as (TP/P + TN/N) x P x N, so
    // that equal accuracies tie rather than differ by rounding.
    let mut best: Option<(f64, u128)> = None;
    for t in candidates {
        let c = Confusion::count(scores.iter().map(|s| *s >= t).zip(positive.iter().copied()));
        let key = u128::from(c.tp) * n_neg + u128::from(c.tn) * n_pos;
        if best.is_none_or(|(_, b)| key > b) {
            best = Some((t, key));
        }
    }
    best.map(|(t, _)| t).ok_or(Undefined::NoItems)
}

/// Rogan-Gladen: the true prevalence behind an apparent rate `p` of a test
/// with this sensitivity and specificity, (p + spec - 1) / (sens + spec -
/// 1), clipped to [0, 1].
pub fn rogan_gladen(p: f64, sensitivity: f64, specificity: f64) -> Stat {
    let den = sensitivity + specificity - 1.0;
    if den <= 0.0 {
        return Err(Undefined::NotInformative);
    }
    Ok(((p + specificity - 1.0) / den).clamp(0.0, 1.0))
}

/// The corrected prevalence of a run and its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Corrected {
    /// The share of the run's samples predicted positive.
    pub raw: Stat,
    /// Rogan-Gladen from the raw rate and the calibration's point
    /// sensitivity and specificity.
    pub corrected: Estimate,
}

/// The prevalence behind `positives` of `n` samples predicted positive,
/// given the calibration's confusion counts.
///
/// The interval is a parametric bootstrap: each of [`BOOTSTRAP_RESAMPLES`]
/// draws takes the sensitivity from Beta(TP + 1, FN + 1), the specificity
/// from Beta(TN + 1, FP + 1) and the raw rate from Beta(positives + 1,
/// negatives + 1) (the posteriors under uniform priors), and applies
/// Rogan-Gladen; draws no better than chance are left out (counted in
/// [`Ci::resamples`]); the 2.5th and 97.5th percentiles bound it. So the
/// interval widens with a small calibration set as well as a small run.
///
/// ```
/// use assay_calibrate::agreement::{corrected_prevalence, Confusion};
/// let calibration = Confusion { tp: 90, fn_: 10, tn: 80, fp: 20 };
/// let c = corrected_prevalence(60, 100, &calibration);
/// // (0.6 + 0.8 - 1) / (0.9 + 0.8 - 1)
/// assert!((c.corrected.value.unwrap() - 0.4 / 0.7).abs() < 1e-12);
/// let ci = c.corrected.ci95.unwrap();
/// assert!(ci.low < 0.4 / 0.7 && 0.4 / 0.7 < ci.high);
/// ```
pub fn corrected_prevalence(positives: u64, n: u64, calibration: &Confusion) -> Corrected {
    let raw = ratio(positives, n, Undefined::NoItems);
    let value =
        raw.and_then(|p| rogan_gladen(p, calibration.sensitivity()?, calibration.specificity()?));
    if value.is_err() {
        return Corrected {
            raw,
            corrected: Estimate { value, ci95: None },
        };
    }
    let mut rng = SplitMix64(BOOTSTRAP_SEED);
    let c = calibration;
    let draws: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .filter_map(|_| {
            let sens = beta(&mut rng, c.tp + 1, c.fn_ + 1);
            let spec = beta(&mut rng, c.tn + 1, c.fp + 1);
            let p = beta(&mut rng, positives + 1, n - positives + 1);
            rogan_gladen(p, sens, spec).ok()
        })
        .collect();
    Corrected {
        raw,
        corrected: Estimate {
            value,
            ci95: interval(draws),
        },
    }
}

/// A Beta(a, b) draw as X / (X + Y) of two Gamma draws.
fn beta(rng: &mut SplitMix64, a: u64, b: u64) -> f64 {
    let x = gamma(rng, a as f64);
    let y = gamma(rng, b as f64);
    x / (x + y)
}

/// A Gamma(shape, 1) draw for shape >= 1 (Marsaglia and Tsang, 2000).
fn gamma(rng: &mut SplitMix64, shape: f64) -> f64 {
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = 1.0 - rng.unit();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// A standard normal draw (Box-Muller; the first uniform is in (0, 1] so
/// its logarithm is finite).
fn normal(rng: &mut SplitMix64) -> f64 {
    let u1 = 1.0 - rng.unit();
    let u2 = rng.unit();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    // The worked example. Reference figures from scikit-learn 1.7 and
    // scipy 1.16 in a throwaway venv:
    //   /tmp/venv-calib/bin/python -c 'from sklearn.metrics import *; \
    //     from scipy.stats import spearmanr, kendalltau; ...'
    // with the labels Y, the scores SCORES thresholded at 0.55 (pred =
    // [1,1,1,1,1,0,0,0,0,0,0,0]) and the grades GRADES below.
    const SCORES: [f64; 12] = [0.9, 0.8, 0.8, 0.7, 0.6, 0.5, 0.5, 0.4, 0.3, 0.2, 0.1, 0.5];
    const Y: [bool; 12] = [
        true, true, false, true, false, true, false, false, true, false, false, true,
    ];
    const GRADES: [f64; 12] = [4.0, 3.0, 3.0, 5.0, 2.0, 1.0, 3.0, 4.0, 2.0, 1.0, 5.0, 3.0];

    fn close(got: Stat, want: f64) {
        let got = got.unwrap();
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }

    #[test]
    fn binary_figures_match_scikit_learn() {
        let c = Confusion::count(SCORES.iter().map(|s| *s >= 0.55).zip(Y));
        assert_eq!(
            c,
            Confusion {
                tp: 3,
                fp: 2,
                tn: 4,
                fn_: 3
            }
        );
        close(c.accuracy(), 0.5833333333333334); // accuracy_score
        close(c.balanced_accuracy(), 0.5833333333333333); // balanced_accuracy_score
        close(c.precision(), 0.6); // precision_score
        close(c.sensitivity(), 0.5); // recall_score
        close(c.f1(), 0.5454545454545454); // f1_score
        close(c.kappa(), 0.16666666666666663); // cohen_kappa_score
        close(roc_auc(&SCORES, &Y), 0.7083333333333334); // roc_auc_score
    }

    #[test]
    fn rank_correlations_match_scipy() {
        close(spearman(&SCORES, &GRADES), 0.18085577973233696); // spearmanr
        close(kendall_tau_b(&SCORES, &GRADES), 0.16971105832553265); // kendalltau (tau-b)
                                                                     // Perfectly reversed ranks.
        close(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), -1.0);
        close(kendall_tau_b(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), -1.0);
    }

    #[test]
    fn degenerate_inputs_say_why() {
        assert_eq!(
            roc_auc(&[0.1, 0.2], &[true, true]),
            Err(Undefined::OneClass)
        );
        assert_eq!(roc_auc(&[], &[]), Err(Undefined::NoItems));
        assert_eq!(
            spearman(&[0.5, 0.5, 0.5], &[1.0, 2.0, 3.0]),
            Err(Undefined::ConstantScores)
        );
        assert_eq!(
            kendall_tau_b(&[0.1, 0.5, 0.9], &[2.0, 2.0, 2.0]),
            Err(Undefined::ConstantLabels)
        );
        let none_predicted = Confusion::count([(false, true), (false, false)]);
        assert_eq!(
            none_predicted.precision(),
            Err(Undefined::NoPredictedPositive)
        );
        close(none_predicted.f1(), 0.0);
        assert_eq!(
            Confusion::count([(false, false)]).f1(),
            Err(Undefined::NoPositives)
        );
        close(none_predicted.kappa(), 0.0);
        let all_one = Confusion::count([(true, true), (true, true)]);
        assert_eq!(all_one.kappa(), Err(Undefined::ChanceAgreementIsOne));
        assert_eq!(all_one.balanced_accuracy(), Err(Undefined::OneClass));
        assert_eq!(
            best_threshold(&[0.1, 0.2], &[false, false]),
            Err(Undefined::OneClass)
        );
        assert_eq!(rogan_gladen(0.5, 0.5, 0.5), Err(Undefined::NotInformative));
        assert_eq!(
            Undefined::ConstantScores.to_string(),
            "undefined because every score is the same"
        );
    }

    #[test]
    fn the_threshold_is_the_lowest_of_the_best() {
        // By hand (and balanced_accuracy_score over the distinct scores):
        // t = 0.3, 0.5 and 0.7 all give balanced accuracy 2/3, the best.
        close(best_threshold(&SCORES, &Y), 0.3);
        // Separable: the lowest positive score.
        close(
            best_threshold(&[0.1, 0.4, 0.6, 0.9], &[false, false, true, true]),
            0.6,
        );
    }

    #[test]
    fn preferences_agree_by_sign() {
        let pairs = [
            // judge prefers b; annotators: b, a -> 1 of 2.
            Preference {
                judge: 0.3,
                annotators: vec![1.0, -2.0],
            },
            // judge tie; one decisive annotator -> 0.5 of 1.
            Preference {
                judge: 0.0,
                annotators: vec![2.0, 0.0],
            },
            // judge prefers a; annotators both a -> 2 of 2.
            Preference {
                judge: -0.1,
                annotators: vec![-1.0, -1.0],
            },
            // no decisive annotator: not counted.
            Preference {
                judge: 0.5,
                annotators: vec![0.0, 0.0],
            },
        ];
        close(preference_agreement(&pairs), 3.5 / 5.0);
        // Both decisive in pairs 1 and 3: they disagree, then agree.
        close(annotator_agreement(&pairs), 0.5);
        assert_eq!(
            preference_agreement(&pairs[3..]),
            Err(Undefined::NoDecisivePreference)
        );
    }

    #[test]
    fn bootstrap_brackets_and_reproduces() {
        let items: Vec<(f64, bool)> = SCORES.iter().copied().zip(Y).collect();
        let auc = |xs: &[(f64, bool)]| {
            let (s, y): (Vec<f64>, Vec<bool>) = xs.iter().copied().unzip();
            roc_auc(&s, &y)
        };
        let e = bootstrap(&items, auc);
        let ci = e.ci95.unwrap();
        close(e.value, 0.7083333333333334);
        assert!(ci.low < 0.7083 && ci.high > 0.7083 && ci.low >= 0.0 && ci.high <= 1.0);
        // Resamples of one class only are left out, and counted.
        assert!(ci.resamples < BOOTSTRAP_RESAMPLES && ci.resamples > 900);
        assert_eq!(bootstrap(&items, auc), e);
        assert_eq!(bootstrap(&items[..1], auc).ci95, None);
    }

    #[test]
    fn halves_split_by_id() {
        let ids: Vec<String> = (0..200).map(|i| format!("row-{i}")).collect();
        let tune = ids.iter().filter(|id| half_of(id) == Half::Tune).count();
        assert!((70..130).contains(&tune), "{tune} of 200");
        assert_eq!(half_of("row-7"), half_of("row-7"));
    }

    #[test]
    fn beta_draws_have_the_right_mean() {
        let mut rng = SplitMix64(BOOTSTRAP_SEED);
        let n = 20_000;
        let mean = (0..n).map(|_| beta(&mut rng, 3, 7)).sum::<f64>() / n as f64;
        // Beta(3, 7) has mean 0.3 and sd 0.138: the mean of 20,000 draws
        // is within 0.005 of it with overwhelming probability, and the
        // seed is fixed.
        assert!((mean - 0.3).abs() < 0.005, "{mean}");
    }

    #[test]
    fn corrected_prevalence_carries_calibration_uncertainty() {
        let small = Confusion {
            tp: 9,
            fn_: 1,
            tn: 8,
            fp: 2,
        };
        let large = Confusion {
            tp: 900,
            fn_: 100,
            tn: 800,
            fp: 200,
        };
        let a = corrected_prevalence(600, 1000, &small);
        let b = corrected_prevalence(600, 1000, &large);
        close(a.raw, 0.6);
        close(a.corrected.value, (0.6 + 0.8 - 1.0) / (0.9 + 0.8 - 1.0));
        assert_eq!(a.corrected.value, b.corrected.value);
        let (ca, cb) = (a.corrected.ci95.unwrap(), b.corrected.ci95.unwrap());
        assert!(cb.low < 0.5715 && 0.5714 < cb.high);
        assert!(
            ca.high - ca.low > 2.0 * (cb.high - cb.low),
            "a calibration of 20 items gives a wider interval than one of 2000: {ca:?} {cb:?}"
        );
        // Clipped to [0, 1]: an apparent rate below the false-positive rate.
        close(corrected_prevalence(10, 100, &large).corrected.value, 0.0);
        let useless = Confusion {
            tp: 5,
            fn_: 5,
            tn: 5,
            fp: 5,
        };
        assert_eq!(
            corrected_prevalence(50, 100, &useless).corrected.value,
            Err(Undefined::NotInformative)
        );
    }
}
