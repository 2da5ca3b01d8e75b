//! Fitting the logistic model: features standardised, then Newton's
//! method on the L2-penalised log-likelihood. Deterministic: the same rows
//! in the same order give the same weights, bit for bit.

/// A fitted logistic model over standardised features.
#[derive(Clone, Debug, PartialEq)]
pub struct Fitted {
    pub mean: Vec<f64>,
    pub scale: Vec<f64>,
    pub weights: Vec<f64>,
    pub bias: f64,
}

impl Fitted {
    /// P(label = true) for one row of features.
    pub fn probability(&self, x: &[f64]) -> f64 {
        logistic(x, &self.mean, &self.scale, &self.weights, self.bias)
    }
}

/// The logistic model's probability for raw features `x`, standardised
/// by `mean` and `scale`.
pub(crate) fn logistic(x: &[f64], mean: &[f64], scale: &[f64], weights: &[f64], bias: f64) -> f64 {
    let z = bias
        + x.iter()
            .zip(mean)
            .zip(scale)
            .zip(weights)
            .map(|(((x, m), s), w)| w * (x - m) / s)
            .sum::<f64>();
    1.0 / (1.0 + (-z).exp())
}

/// Fits `rows` (features, label) with penalty `l2` on the weights (not
/// the bias), for at most `iterations` Newton steps.
///
/// ```
/// use assay_grounding::fit::fit;
/// let rows: Vec<(Vec<f64>, bool)> = (0..40).map(|i| (vec![i as f64], i % 10 >= 4)).collect();
/// let m = fit(&rows, 1.0, 50);
/// assert!(m.weights[0] > 0.0);
/// assert!(m.probability(&[39.0]) > m.probability(&[0.0]));
/// ```
pub fn fit(rows: &[(Vec<f64>, bool)], l2: f64, iterations: usize) -> Fitted {
    let d = rows.first().map_or(0, |(x, _)| x.len());
    let n = rows.len().max(1) as f64;
    let mean: Vec<f64> = (0..d)
        .map(|j| rows.iter().map(|(x, _)| x[j]).sum::<f64>() / n)
        .collect();
    let scale: Vec<f64> = (0..d)
        .map(|j| {
            let var = rows
                .iter()
                .map(|(x, _)| (x[j] - mean[j]).powi(2))
                .sum::<f64>()
                / n;
            if var > 0.0 {
                var.sqrt()
            } else {
                1.0
            }
        })
        .collect();
    let z: Vec<Vec<f64>> = rows
        .iter()
        .map(|(x, _)| {
            let mut r: Vec<f64> = (0..d).map(|j| (x[j] - mean[j]) / scale[j]).collect();
            r.push(1.0);
            r
        })
        .collect();
    // beta[d] is the bias.
    let mut beta = vec![0.0; d + 1];
    for _ in 0..iterations {
        let mut grad = vec![0.0; d + 1];
        let mut hess = vec![vec![0.0; d + 1]; d + 1];
        for (zi, (_, y)) in z.iter().zip(rows) {
            let eta: f64 = zi.iter().zip(&beta).map(|(a, b)| a * b).sum();
            let p = 1.0 / (1.0 + (-eta).exp());
            let r = if *y { 1.0 } else { 0.0 } - p;
            let w = p * (1.0 - p);
            for a in 0..=d {
                grad[a] += r * zi[a];
                for b in 0..=d {
                    hess[a][b] += w * zi[a] * zi[b];
                }
            }
        }
        for a in 0..d {
            grad[a] -= l2 * beta[a];
            hess[a][a] += l2;
        }
        let step = solve(hess, grad);
        let size = step.iter().map(|s| s.abs()).fold(0.0, f64::max);
        for (b, s) in beta.iter_mut().zip(&step) {
            *b += s;
        }
        if size < 1e-12 {
            break;
        }
    }
    let bias = beta.pop().unwrap_or(0.0);
    Fitted {
        mean,
        scale,
        weights: beta,
        bias,
    }
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting (`a` is
/// positive definite here: the penalised Hessian).
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        b.swap(col, pivot);
        let p = a[col][col];
        if p == 0.0 {
            continue;
        }
        let (top, rest) = a.split_at_mut(col + 1);
        let pivot_row = &top[col];
        for (r, row) in rest.iter_mut().enumerate() {
            let f = row[col] / p;
            for (x, y) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= f * y;
            }
            b[col + 1 + r] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = if a[row][row] == 0.0 {
            0.0
        } else {
            (b[row] - s) / a[row][row]
        };
    }
    x
}

/// The ROC-AUC of `scores` for `labels` (true = positive), ties counted
/// half; `None` when one class is absent.
///
/// ```
/// use assay_grounding::fit::roc_auc;
/// assert_eq!(roc_auc(&[0.1, 0.4, 0.35, 0.8], &[false, false, true, true]), Some(0.75));
/// ```
pub fn roc_auc(scores: &[f64], labels: &[bool]) -> Option<f64> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let (mut rank_sum, mut i) = (0.0, 0);
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && scores[order[j + 1]] == scores[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        rank_sum += (i..=j).filter(|&k| labels[order[k]]).count() as f64 * rank;
        i = j + 1;
    }
    let pos = labels.iter().filter(|l| **l).count() as f64;
    let neg = labels.len() as f64 - pos;
    if pos == 0.0 || neg == 0.0 {
        return None;
    }
    Some((rank_sum - pos * (pos + 1.0) / 2.0) / (pos * neg))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two features, one of them informative; the fitted probability at
    /// the optimum satisfies the penalised score equations.
    #[test]
    fn the_fit_solves_the_penalised_score_equations() {
        let rows: Vec<(Vec<f64>, bool)> = (0..60)
            .map(|i| (vec![(i % 7) as f64, (i % 3) as f64], (i % 7) + (i % 2) >= 4))
            .collect();
        let m = fit(&rows, 2.0, 100);
        // Gradient of the penalised log-likelihood in standardised space.
        for j in 0..2 {
            let g: f64 = rows
                .iter()
                .map(|(x, y)| {
                    let z = (x[j] - m.mean[j]) / m.scale[j];
                    (if *y { 1.0 } else { 0.0 } - m.probability(x)) * z
                })
                .sum::<f64>()
                - 2.0 * m.weights[j];
            assert!(g.abs() < 1e-9, "feature {j}: {g}");
        }
        let g0: f64 = rows
            .iter()
            .map(|(x, y)| if *y { 1.0 } else { 0.0 } - m.probability(x))
            .sum();
        assert!(g0.abs() < 1e-9);
        assert_eq!(m, fit(&rows, 2.0, 100));
    }

    #[test]
    fn roc_auc_counts_ties_half_and_needs_both_classes() {
        assert_eq!(roc_auc(&[0.5, 0.5], &[true, false]), Some(0.5));
        assert_eq!(roc_auc(&[0.1, 0.2], &[true, true]), None);
    }
}
