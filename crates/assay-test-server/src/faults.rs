//! Faults as real servers and gateways produce them, injected on a seeded
//! schedule: the one way tests (and the `loopback-judge` binary) make the
//! loopback server misbehave.
//!
//! A [`Schedule`] wraps any handler. Whether an attempt is faulty, and
//! with which [`Fault`], follows from the seed, the request's content and
//! how many times that same request was seen before, never from arrival
//! order: concurrent clients get the same faults run after run, and a
//! retried request draws afresh (so a fault rate of one in five leaves a
//! request faulty five times in a row one time in 3125). It also tells
//! each request's relation to the earlier ones of the same content
//! ([`Tally`]): new, a retry of a faulty attempt, or asked again although
//! it was answered.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};

use crate::{Recorded, Reply};

/// One way an answer goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// HTTP 429 without a `Retry-After`.
    RateLimited,
    /// HTTP 429 with `Retry-After: 1` (seconds).
    RateLimitedRetryAfter,
    /// HTTP 500.
    Internal,
    /// HTTP 502.
    BadGateway,
    /// HTTP 503.
    Unavailable,
    /// A TCP reset before any byte of the answer.
    ResetBeforeHead,
    /// The head and half the body, then a TCP reset.
    ResetMidBody,
    /// The head and half the body, then nothing for the schedule's stall.
    Stall,
    /// A 200 whose JSON is cut in the middle.
    TruncatedJson,
    /// A 200 whose body is not UTF-8.
    InvalidUtf8,
    /// A 200 whose body is an error object, as some gateways send.
    ErrorObject,
    /// A 200 with no choices (no data, for embeddings).
    NoChoices,
    /// A 200 body larger than the schedule's huge size.
    HugeBody,
    /// A `content-length` longer than the body, then the connection closes.
    WrongContentLength,
    /// The right answer, naming another model (llama.cpp and Azure do
    /// this for good answers, so it is not an error).
    OtherModel,
}

impl Fault {
    /// Every fault, in declaration order: the mix a [`Schedule`] draws from.
    pub const ALL: [Fault; 15] = [
        Fault::RateLimited,
        Fault::RateLimitedRetryAfter,
        Fault::Internal,
        Fault::BadGateway,
        Fault::Unavailable,
        Fault::ResetBeforeHead,
        Fault::ResetMidBody,
        Fault::Stall,
        Fault::TruncatedJson,
        Fault::InvalidUtf8,
        Fault::ErrorObject,
        Fault::NoChoices,
        Fault::HugeBody,
        Fault::WrongContentLength,
        Fault::OtherModel,
    ];

    /// The stable snake_case name (`--fault` of `loopback-judge`).
    pub fn name(self) -> &'static str {
        match self {
            Fault::RateLimited => "rate_limited",
            Fault::RateLimitedRetryAfter => "rate_limited_retry_after",
            Fault::Internal => "http_500",
            Fault::BadGateway => "http_502",
            Fault::Unavailable => "http_503",
            Fault::ResetBeforeHead => "reset_before_head",
            Fault::ResetMidBody => "reset_mid_body",
            Fault::Stall => "stall",
            Fault::TruncatedJson => "truncated_json",
            Fault::InvalidUtf8 => "invalid_utf8",
            Fault::ErrorObject => "error_object",
            Fault::NoChoices => "no_choices",
            Fault::HugeBody => "huge_body",
            Fault::WrongContentLength => "wrong_content_length",
            Fault::OtherModel => "other_model",
        }
    }

    /// The fault named `name`.
    pub fn from_name(name: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether a client should treat this answer as a failed attempt.
    pub fn is_failure(self) -> bool {
        self != Fault::OtherModel
    }

    /// This fault in place of `good`, the body of the answer a healthy
    /// server would have sent.
    pub fn reply(self, good: &str, stall: Duration, huge_bytes: usize) -> Reply {
        let ok = |body: String| Reply::Http {
            status: 200,
            headers: Vec::new(),
            body,
            delay: Duration::ZERO,
        };
        match self {
            Fault::RateLimited => crate::error(429, "rate limited (injected)"),
            Fault::RateLimitedRetryAfter => {
                crate::error(429, "rate limited (injected)").with_header("Retry-After", "1")
            }
            Fault::Internal => crate::error(500, "internal error (injected)"),
            Fault::BadGateway => crate::error(502, "bad gateway (injected)"),
            Fault::Unavailable => crate::error(503, "unavailable (injected)"),
            Fault::ResetBeforeHead => Reply::Reset,
            Fault::ResetMidBody => Reply::ResetMidBody {
                body: good.to_owned(),
            },
            Fault::Stall => Reply::SlowBody {
                body: good.to_owned(),
                stall,
            },
            Fault::TruncatedJson => {
                let bytes = &good.as_bytes()[..good.len() / 2];
                ok(String::from_utf8_lossy(bytes).into_owned())
            }
            Fault::InvalidUtf8 => {
                let mut bytes = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    good.len() + 2
                )
                .into_bytes();
                let half = good.len() / 2;
                bytes.extend_from_slice(&good.as_bytes()[..half]);
                bytes.extend_from_slice(&[0xC3, 0x28]);
                bytes.extend_from_slice(&good.as_bytes()[half..]);
                Reply::Raw(bytes)
            }
            Fault::ErrorObject => ok(json!({"error": {
                "message": "upstream model overloaded (injected)",
                "type": "server_error", "code": null
            }})
            .to_string()),
            Fault::NoChoices => ok(json!({
                "id": "cmpl-empty", "object": "chat.completion", "model": "judge",
                "choices": [], "data": []
            })
            .to_string()),
            Fault::HugeBody => {
                let filler = "x".repeat(huge_bytes);
                ok(json!({"choices": [], "padding": filler}).to_string())
            }
            Fault::WrongContentLength => Reply::raw(format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{good}",
                good.len() + 100
            )),
            Fault::OtherModel => match serde_json::from_str::<Value>(good) {
                Ok(mut v) => {
                    v["model"] = json!("some-other-model");
                    ok(v.to_string())
                }
                Err(_) => ok(good.to_owned()),
            },
        }
    }
}

/// Which attempts are faulty: `faulty_per_1000` of them, each with a
/// fault drawn from `faults`, seeded by `seed`.
#[derive(Debug)]
pub struct Schedule {
    seed: u64,
    faulty_per_1000: u64,
    faults: Vec<Fault>,
    /// How long a [`Fault::Stall`] holds the rest of the body back.
    pub stall: Duration,
    /// The body size of a [`Fault::HugeBody`].
    pub huge_bytes: usize,
    seen: Mutex<History>,
    injected: Mutex<BTreeMap<Fault, usize>>,
}

/// Every request a [`Schedule`] drew for, by how it relates to the earlier
/// attempts of the same content (path and body).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Every attempt.
    pub requests: usize,
    /// Attempts whose content was never seen before.
    pub distinct: usize,
    /// Attempts whose content's previous attempt got a failing fault
    /// ([`Fault::is_failure`]): retries the fault asked for.
    pub after_fault: usize,
    /// Attempts whose content's previous attempt was answered well: asked
    /// again although an answer was sent (by a client that died before it
    /// kept the answer, that gave up waiting, or that asked twice).
    pub repeated: usize,
}

/// The attempts seen so far, by content hash.
#[derive(Debug, Default)]
struct History {
    /// Per content: attempts seen, and whether the last one got a failing
    /// fault.
    attempts: HashMap<u64, (u64, bool)>,
    tally: Tally,
}

impl Schedule {
    /// `faulty_per_1000` attempts in a thousand get a fault from `faults`
    /// (every [`Fault`] when empty). Stalls last 60 s; huge bodies are
    /// 9 MiB, beyond the 8 MiB assay reads by default.
    pub fn new(seed: u64, faulty_per_1000: u64, faults: &[Fault]) -> Schedule {
        Schedule {
            seed,
            faulty_per_1000: faulty_per_1000.min(1000),
            faults: if faults.is_empty() {
                Fault::ALL.to_vec()
            } else {
                faults.to_vec()
            },
            stall: Duration::from_secs(60),
            huge_bytes: 9 << 20,
            seen: Mutex::new(History::default()),
            injected: Mutex::new(BTreeMap::new()),
        }
    }

    /// The fault of this attempt of `req`, if it gets one.
    pub fn draw(&self, req: &Recorded) -> Option<Fault> {
        let content = fnv1a(
            self.seed,
            [req.path.as_bytes(), req.body.to_string().as_bytes()],
        );
        let fault = {
            let mut seen = self.seen.lock().expect("seen");
            let History { attempts, tally } = &mut *seen;
            let (nth, last_failed) = attempts.entry(content).or_insert((0, false));
            tally.requests += 1;
            match (*nth, *last_failed) {
                (0, _) => tally.distinct += 1,
                (_, true) => tally.after_fault += 1,
                (_, false) => tally.repeated += 1,
            }
            *nth += 1;
            let draw = mix(fnv1a(content, [&nth.to_le_bytes()[..]]));
            let fault = (draw % 1000 < self.faulty_per_1000)
                .then(|| self.faults[((draw / 1000) % self.faults.len() as u64) as usize]);
            *last_failed = fault.is_some_and(Fault::is_failure);
            fault?
        };
        *self
            .injected
            .lock()
            .expect("injected")
            .entry(fault)
            .or_default() += 1;
        Some(fault)
    }

    /// The answer to `req`: `healthy`'s, or a fault in its place.
    pub fn answer(&self, req: &Recorded, healthy: Reply) -> Reply {
        let Some(fault) = self.draw(req) else {
            return healthy;
        };
        match &healthy {
            Reply::Http {
                status: 200, body, ..
            } => fault.reply(body, self.stall, self.huge_bytes),
            _ => healthy,
        }
    }

    /// The faults injected so far, by kind.
    pub fn injected(&self) -> BTreeMap<Fault, usize> {
        self.injected.lock().expect("injected").clone()
    }

    /// How many faults were injected so far.
    pub fn injected_total(&self) -> usize {
        self.injected().values().sum()
    }

    /// The attempts drawn for so far, by how each relates to the earlier
    /// ones of the same content.
    pub fn tally(&self) -> Tally {
        self.seen.lock().expect("seen").tally
    }
}

/// The splitmix64 finaliser: FNV-1a's low digits follow its last bytes
/// too closely to draw from.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// FNV-1a over `parts`, started from `seed`: stable across runs and
/// platforms, unlike the standard library's hashers.
fn fnv1a<'a>(seed: u64, parts: impl IntoIterator<Item = &'a [u8]>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    for part in parts {
        for b in part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn req(text: &str) -> Recorded {
        Recorded {
            path: "/v1/chat/completions".into(),
            headers: Vec::new(),
            body: json!({"messages": [{"role": "user", "content": text}]}),
            at: Instant::now(),
        }
    }

    #[test]
    fn the_schedule_follows_content_and_seed_not_arrival_order() {
        let texts: Vec<String> = (0..2000).map(|i| format!("q{i}")).collect();
        let run = |order: &mut dyn Iterator<Item = &String>| {
            let s = Schedule::new(7, 200, &[]);
            let mut drawn: BTreeMap<String, Option<Fault>> = BTreeMap::new();
            for t in order {
                drawn.insert(t.clone(), s.draw(&req(t)));
            }
            drawn
        };
        let forward = run(&mut texts.iter());
        assert_eq!(forward, run(&mut texts.iter().rev()));
        let faulty = forward.values().filter(|f| f.is_some()).count();
        assert!((300..500).contains(&faulty), "{faulty} of 2000");
        let kinds: std::collections::BTreeSet<_> = forward.values().flatten().collect();
        assert_eq!(kinds.len(), Fault::ALL.len(), "every fault is drawn");
        let other_seed = Schedule::new(8, 200, &[]);
        assert!(texts.iter().any(|t| other_seed.draw(&req(t)) != forward[t]));
    }

    #[test]
    fn a_retried_request_draws_again() {
        let s = Schedule::new(1, 500, &[Fault::Internal]);
        let draws: Vec<_> = (0..64).map(|_| s.draw(&req("same"))).collect();
        assert!(draws.contains(&None) && draws.contains(&Some(Fault::Internal)));
    }

    #[test]
    fn retries_of_faulty_attempts_and_repeats_of_answered_ones_are_told_apart() {
        let tally = |faulty_per_1000, faults: &[Fault], texts: &[&str]| {
            let s = Schedule::new(5, faulty_per_1000, faults);
            for t in texts {
                s.draw(&req(t));
            }
            s.tally()
        };
        let every = ["a", "a", "b", "a"];
        // Every attempt faulty: each later attempt of "a" retries a fault.
        assert_eq!(
            tally(1000, &[Fault::Internal], &every),
            Tally {
                requests: 4,
                distinct: 2,
                after_fault: 2,
                repeated: 0
            }
        );
        // Healthy answers, or a good answer naming another model: "a"
        // was answered, and asked again twice.
        let answered = Tally {
            requests: 4,
            distinct: 2,
            after_fault: 0,
            repeated: 2,
        };
        assert_eq!(tally(0, &[], &every), answered);
        assert_eq!(tally(1000, &[Fault::OtherModel], &every), answered);
        // A mix: each attempt after the first follows one, and is a
        // retry when that one was faulty.
        let s = Schedule::new(9, 500, &[Fault::Internal]);
        let faulty: Vec<bool> = (0..200).map(|_| s.draw(&req("same")).is_some()).collect();
        let retries = faulty[..199].iter().filter(|f| **f).count();
        assert!((50..150).contains(&retries), "{retries} of 199");
        assert_eq!(
            s.tally(),
            Tally {
                requests: 200,
                distinct: 1,
                after_fault: retries,
                repeated: 199 - retries
            }
        );
    }

    #[test]
    fn names_round_trip() {
        for f in Fault::ALL {
            assert_eq!(Fault::from_name(f.name()), Some(f));
        }
    }
}
