//! Exact arithmetic that nltk gets from Python: `math.fsum`, `Fraction`
//! arithmetic (smoothing methods 5 to 7), and the correctly rounded
//! conversion of a fraction to a float.

/// Python's `math.fsum`: the correctly rounded sum of `values`
/// (Shewchuk's exact partials, then CPython's half-even correction).
/// Non-finite inputs give the IEEE sum instead of raising.
pub(crate) fn fsum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    let mut special = 0.0;
    for mut x in values {
        if !x.is_finite() {
            special += x;
            continue;
        }
        let mut i = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        partials.truncate(i);
        partials.push(x);
    }
    if special != 0.0 || special.is_nan() {
        return special;
    }
    let Some(mut n) = partials.len().checked_sub(1) else {
        return 0.0;
    };
    let mut hi = partials[n];
    let mut lo = 0.0;
    while n > 0 {
        let x = hi;
        n -= 1;
        let y = partials[n];
        hi = x + y;
        let yr = hi - x;
        lo = y - yr;
        if lo != 0.0 {
            break;
        }
    }
    // Round half to even across the remaining partials, as CPython does.
    if n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0)) {
        let y = lo * 2.0;
        let x = hi + y;
        let yr = x - hi;
        if y == yr {
            hi = x;
        }
    }
    hi
}

/// `n / d` correctly rounded to the nearest float, ties to even, like
/// Python's `int / int` and `float(Fraction)`.
pub(crate) fn ratio_to_f64(n: u128, d: u128) -> f64 {
    const EXACT: u128 = 1 << 53;
    if d == 0 {
        return if n == 0 { f64::NAN } else { f64::INFINITY };
    }
    if n == 0 {
        return 0.0;
    }
    if n <= EXACT && d <= EXACT {
        return n as f64 / d as f64;
    }
    // Long division to a 56-bit quotient q with n/d = (q + frac) * 2^e.
    let mut q = n / d;
    let mut r = n % d;
    let mut e: i32 = 0;
    while q < (1 << 55) {
        q <<= 1;
        // r < d, so 2r >= d iff r >= d - r (no overflow).
        if r >= d - r {
            r -= d - r;
            q |= 1;
        } else {
            r <<= 1;
        }
        e -= 1;
    }
    let mut sticky = r != 0;
    while q >= (1 << 56) {
        sticky |= q & 1 != 0;
        q >>= 1;
        e += 1;
    }
    let low = q & 0b111;
    q >>= 3;
    e += 3;
    if low > 0b100 || (low == 0b100 && (sticky || q & 1 == 1)) {
        q += 1;
    }
    (q as f64) * pow2(e)
}

/// `2^e` as a float (exact in the normal range).
fn pow2(e: i32) -> f64 {
    if (-1022..=1023).contains(&e) {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        2f64.powi(e)
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A non-negative rational in lowest terms (denominator > 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rational {
    num: u128,
    den: u128,
}

impl Rational {
    /// `num / den`; `None` when `den` is 0.
    pub(crate) fn new(num: u128, den: u128) -> Option<Self> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den);
        Some(Rational {
            num: num / g,
            den: den / g,
        })
    }

    pub(crate) fn is_zero(self) -> bool {
        self.num == 0
    }

    pub(crate) fn to_f64(self) -> f64 {
        ratio_to_f64(self.num, self.den)
    }

    /// Exact sum; `None` on overflow.
    pub(crate) fn checked_add(self, o: Rational) -> Option<Rational> {
        let g = gcd(self.den, o.den);
        let a = self.num.checked_mul(o.den / g)?;
        let b = o.num.checked_mul(self.den / g)?;
        Rational::new(a.checked_add(b)?, (self.den / g).checked_mul(o.den)?)
    }

    /// Exact product; `None` on overflow.
    pub(crate) fn checked_mul(self, o: Rational) -> Option<Rational> {
        let g1 = gcd(self.num, o.den).max(1);
        let g2 = gcd(o.num, self.den).max(1);
        Rational::new(
            (self.num / g1).checked_mul(o.num / g2)?,
            (self.den / g2).checked_mul(o.den / g1)?,
        )
    }

    /// Exact quotient; `None` on overflow or division by zero.
    pub(crate) fn checked_div(self, o: Rational) -> Option<Rational> {
        self.checked_mul(Rational::new(o.den, o.num)?)
    }

    pub(crate) fn int(n: u128) -> Rational {
        Rational { num: n, den: 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsum_is_exact() {
        assert_eq!(
            fsum([1e100, 1.0, -1e100, 1e-100, 1e50, -1.0, -1e50]),
            1e-100
        );
        assert_eq!(fsum([0.1; 10]), 1.0);
        assert_eq!(fsum([]), 0.0);
        // Half-even correction: 1 + 2^-53 + 2^-105 rounds up.
        let tiny = 2f64.powi(-53);
        assert_eq!(fsum([1.0, tiny, tiny * 2f64.powi(-52)]), 1.0 + 2.0 * tiny);
        assert_eq!(fsum([1.0, tiny]), 1.0);
    }

    #[test]
    fn ratio_rounding() {
        assert_eq!(ratio_to_f64(1, 3), 1.0 / 3.0);
        let big = (1u128 << 80) + 1;
        assert_eq!(ratio_to_f64(big, 3), (big as f64) / 3.0);
        // 2^53 + 1 over 1 is a tie that rounds to even.
        assert_eq!(ratio_to_f64((1 << 53) + 1, 1), 9007199254740992.0);
        assert_eq!(ratio_to_f64((1 << 53) + 3, 1), 9007199254740996.0);
        // (10^30 + 7) / (3 * 10^29): Python gives 3.3333333333333335.
        let n = 10u128.pow(30) + 7;
        assert_eq!(ratio_to_f64(n, 3 * 10u128.pow(29)), 3.3333333333333335);
        assert_eq!(ratio_to_f64(7, 1 << 100), 7.0 * 2f64.powi(-100));
    }

    #[test]
    fn rational_arithmetic() {
        let a = Rational::new(2, 4).unwrap();
        let b = Rational::new(1, 3).unwrap();
        assert_eq!(a.checked_add(b), Rational::new(5, 6));
        assert_eq!(a.checked_mul(b), Rational::new(1, 6));
        assert_eq!(a.checked_div(b), Rational::new(3, 2));
        assert_eq!(a.checked_div(Rational::int(0)), None);
    }
}
