//! Throughput benchmark against a loopback server answering after 100 ms.
//!
//! `cargo bench -p assay-llm --bench throughput` runs the server in a child
//! process (so the CPU figures are the client's alone), warms up with a
//! tenth of the requests, then makes rounds of four runs, each posting
//! 10,000 distinct requests at concurrency 64 against the ideal
//! 10,000 x 0.1 s / 64 = 15.6 s:
//! 1. through `Judge` with a cache;
//! 2. through `Judge` without a cache (the HTTP client's cost alone);
//! 3. the same request bodies in hand-written HTTP/1.1 on tokio TCP
//!    connections, with nothing of assay around them (the floor: what the
//!    kernel and the runtime cost);
//! 4. the same bodies through a bare `reqwest` client (the HTTP stack assay
//!    uses for https and proxied endpoints; plain-http ones go through its
//!    own lean HTTP/1.1 client).
//!
//! The runs of a round alternate, and each figure is the median over the
//! rounds: CPU time per request swings with what else the machine runs, so
//! only figures from the same rounds compare. What the cache adds is the
//! median of the rounds' differences between runs 1 and 2; runs 1 and 2
//! are also given as ratios to runs 3 and 4 of the same round. Last come
//! five fully cached reruns of one round's requests (50,000 answers).
//!
//! Options: `--requests N` (default 10000), `--concurrency C` (default 64),
//! `--latency-ms L` (default 100), `--rounds R` (default 3), `--threads T`
//! client runtime workers (default 2, the machine's cores), `--server URL`
//! to use a server started separately with `--serve` (e.g. to profile the
//! client alone).

use assay_test_server as server;
use server::arg;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use assay_llm::{
    Cache, ChatRequest, Judge, Limiter, Message, ModelSpec, OpenAiChat, PromptRef, ProviderKind,
    ProviderOptions, Source,
};

/// User + system CPU time of this process, all threads (those that have
/// exited included), to the nanosecond: the kernel's own clock for it.
/// (The tick counts in /proc/self/stat move in 10 ms steps.)
fn cpu_time() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill in.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "the process CPU clock is readable");
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

fn serve(latency: Duration) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let s = server::Server::start(move |_, _| server::chat("{\"verdict\": 1}").after(latency))
            .await;
        println!("{}", s.base_url());
        // Serve until the parent closes our stdin.
        tokio::task::spawn_blocking(|| std::io::stdin().read_line(&mut String::new()))
            .await
            .ok();
    });
}

/// `n` distinct requests; `round` makes each round's set new to the cache.
fn requests(n: u64, round: u64) -> Vec<ChatRequest> {
    let schema = serde_json::json!({"type": "object", "required": ["verdict"],
        "properties": {"verdict": {"type": "integer", "enum": [0, 1]}}});
    (0..n)
        .map(|i| {
            ChatRequest::new(
                PromptRef {
                    id: "bench".into(),
                    version: "1".into(),
                },
                vec![
                    Message::system("You are a judge."),
                    Message::user(format!("Is statement {i} of round {round} supported?")),
                ],
            )
            .with_schema(schema.clone())
        })
        .collect()
}

/// Posts every body with a bare `reqwest` client, `concurrency` at a time,
/// reading each answer whole: the HTTP stack's own cost. Wall and CPU time.
async fn run_bare(
    url: &str,
    bodies: Arc<Vec<Vec<u8>>>,
    concurrency: usize,
) -> (Duration, Duration) {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(concurrency)
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let url = reqwest::Url::parse(&format!("{url}/chat/completions")).expect("url");
    let slots = Arc::new(tokio::sync::Semaphore::new(concurrency));
    let (wall, cpu) = (Instant::now(), cpu_time());
    let tasks: Vec<_> = (0..bodies.len())
        .map(|i| {
            let (client, url, bodies, slots) = (
                client.clone(),
                url.clone(),
                Arc::clone(&bodies),
                Arc::clone(&slots),
            );
            tokio::spawn(async move {
                let _slot = slots.acquire().await.expect("semaphore");
                let resp = client
                    .post(url)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(bodies[i].clone())
                    .send()
                    .await
                    .expect("bare request");
                assert!(resp.status().is_success());
                resp.bytes().await.expect("bare body").len()
            })
        })
        .collect();
    for t in tasks {
        assert!(t.await.expect("task") > 0);
    }
    (wall.elapsed(), cpu_time() - cpu)
}

/// Posts every body over `concurrency` kept-alive TCP connections with
/// hand-written HTTP/1.1 (content-length answers only): what the kernel and
/// the runtime alone cost. Wall and CPU time.
async fn run_raw(url: &str, bodies: Arc<Vec<Vec<u8>>>, concurrency: usize) -> (Duration, Duration) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let url = reqwest::Url::parse(url).expect("url");
    let addr = format!(
        "{}:{}",
        url.host_str().expect("host"),
        url.port().expect("port")
    );
    let path = format!("{}/chat/completions", url.path());
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (wall, cpu) = (Instant::now(), cpu_time());
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (addr, path, bodies, next) = (addr.clone(), path.clone(), Arc::clone(&bodies), Arc::clone(&next));
            tokio::spawn(async move {
                let mut conn = tokio::net::TcpStream::connect(&addr).await.expect("connect");
                conn.set_nodelay(true).expect("nodelay");
                let mut buf = Vec::with_capacity(4096);
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(body) = bodies.get(i) else { break };
                    let mut req = format!(
                        "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    req.extend_from_slice(body);
                    conn.write_all(&req).await.expect("write");
                    buf.clear();
                    let total = loop {
                        let mut chunk = [0u8; 4096];
                        let n = conn.read(&mut chunk).await.expect("read");
                        assert!(n > 0, "closed");
                        buf.extend_from_slice(&chunk[..n]);
                        let text = String::from_utf8_lossy(&buf);
                        if let Some(end) = text.find("\r\n\r\n") {
                            let len: usize = text[..end]
                                .lines()
                                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().expect("length")))
                                .expect("content-length");
                            break end + 4 + len;
                        }
                    };
                    while buf.len() < total {
                        let mut chunk = [0u8; 4096];
                        let n = conn.read(&mut chunk).await.expect("read");
                        assert!(n > 0, "closed");
                        buf.extend_from_slice(&chunk[..n]);
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.await.expect("worker");
    }
    (wall.elapsed(), cpu_time() - cpu)
}

/// One measured run: wall time and client CPU time.
struct Run {
    wall: Duration,
    cpu: Duration,
}

/// The middle value (the upper one of an even count); durations and
/// differences of microseconds alike.
fn median<T: Copy + Default + PartialOrd>(xs: impl Iterator<Item = T>) -> T {
    let mut xs: Vec<T> = xs.collect();
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    xs.get(xs.len() / 2).copied().unwrap_or_default()
}

/// Wall time, client CPU time, and where each answer came from.
async fn run_all(
    judge: &Arc<Judge>,
    reqs: &Arc<Vec<ChatRequest>>,
) -> (Duration, Duration, Vec<Source>) {
    let (wall, cpu) = (Instant::now(), cpu_time());
    let tasks: Vec<_> = (0..reqs.len())
        .map(|i| {
            let (judge, reqs) = (Arc::clone(judge), Arc::clone(reqs));
            tokio::spawn(async move { judge.chat(&reqs[i]).await.map(|r| r.source) })
        })
        .collect();
    let mut sources = Vec::with_capacity(tasks.len());
    for t in tasks {
        match t.await {
            Ok(Ok(s)) => sources.push(s),
            Ok(Err(e)) => panic!("request failed: {e}"),
            Err(e) => panic!("task failed: {e}"),
        }
    }
    (wall.elapsed(), cpu_time() - cpu, sources)
}

fn main() {
    let latency = Duration::from_millis(arg("--latency-ms", 100));
    if std::env::args().any(|a| a == "--serve") {
        serve(latency);
        return;
    }
    let n = arg("--requests", 10_000);
    let concurrency = arg("--concurrency", 64) as usize;
    let given = std::env::args().skip_while(|a| a != "--server").nth(1);
    let mut child = None;
    let base_url = match given {
        Some(url) => url,
        None => {
            let exe = std::env::current_exe().expect("own path");
            let mut server = Command::new(exe)
                .args(["--serve", "--latency-ms", &latency.as_millis().to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("start server process");
            let mut url = String::new();
            BufReader::new(server.stdout.take().expect("stdout"))
                .read_line(&mut url)
                .expect("server address");
            child = Some(server);
            url
        }
    };

    let opts = ProviderOptions {
        base_url: Some(base_url.trim().to_owned()),
        concurrency,
        ..ProviderOptions::default()
    };
    let spec = ModelSpec {
        provider: ProviderKind::Vllm,
        model: "bench".into(),
    };
    let dir = std::env::temp_dir().join(format!("assay-llm-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = Arc::new(Cache::open(dir.join("cache.sqlite")).expect("cache"));
    let judge_with = |cache: Option<Arc<Cache>>| {
        let limiter = Arc::new(Limiter::new(opts.concurrency, None, None));
        let model = OpenAiChat::with_key(&spec, &opts, None, limiter).expect("client");
        Arc::new(Judge::new(Arc::new(model), cache, 1))
    };
    let ideal = latency.mul_f64(n as f64 / concurrency as f64);

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(arg("--threads", 2) as usize)
        .enable_all()
        .build()
        .expect("runtime");
    let rounds = arg("--rounds", 3);
    rt.block_on(async {
        println!(
            "{n} requests, concurrency {concurrency}, server latency {latency:?}; ideal {:.2} s; \
             medians of {rounds} rounds",
            ideal.as_secs_f64()
        );
        // Warm-up, not measured: the first requests of a process pay for
        // growing the heap and starting threads (about 20 us each over
        // 10,000), which would land on whichever run came first.
        run_all(&judge_with(None), &Arc::new(requests(n / 10, u64::MAX))).await;
        let url = base_url.trim().trim_end_matches('/');
        let mut runs: [Vec<Run>; 4] = Default::default();
        let mut last = Arc::new(Vec::new());
        for round in 0..rounds {
            let reqs = Arc::new(requests(n, round));
            for (slot, cache) in [(0, Some(Arc::clone(&cache))), (1, None)] {
                let (wall, cpu, sources) = run_all(&judge_with(cache), &reqs).await;
                assert!(sources.iter().all(|s| *s == Source::Upstream));
                runs[slot].push(Run { wall, cpu });
            }
            let bodies: Vec<Vec<u8>> = {
                let limiter = Arc::new(Limiter::new(opts.concurrency, None, None));
                let model = OpenAiChat::with_key(&spec, &opts, None, limiter).expect("client");
                reqs.iter()
                    .map(|r| serde_json::to_vec(&model.request_body(r)).expect("body"))
                    .collect()
            };
            let bodies = Arc::new(bodies);
            let (wall, cpu) = run_raw(url, Arc::clone(&bodies), concurrency).await;
            runs[2].push(Run { wall, cpu });
            let (wall, cpu) = run_bare(url, bodies, concurrency).await;
            runs[3].push(Run { wall, cpu });
            last = reqs;
        }
        let per_request = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
        let labels = [
            "upstream (with cache)",
            "upstream (no cache)",
            "reference (raw HTTP/1.1 on tokio TCP, the floor)",
            "reference (bare reqwest)",
        ];
        for (label, runs) in labels.iter().zip(&runs) {
            let wall = median(runs.iter().map(|r| r.wall));
            let cpus: Vec<String> = runs.iter().map(|r| format!("{:.0}", per_request(r.cpu))).collect();
            println!(
                "{label}: {:.2} s wall ({:+.1}% vs ideal), client CPU {:.1} us/request (rounds: {})",
                wall.as_secs_f64(),
                (wall.as_secs_f64() / ideal.as_secs_f64() - 1.0) * 100.0,
                per_request(median(runs.iter().map(|r| r.cpu))),
                cpus.join(", "),
            );
        }
        // CPU time per request moves with the machine (the floor itself
        // read 15 us on one VM and 22 us on another); each run against the
        // references of its own round moves much less.
        let ratio = |run: usize, reference: usize| {
            median(runs[run].iter().zip(&runs[reference]).map(|(r, base)| {
                r.cpu.as_secs_f64() / base.cpu.as_secs_f64().max(f64::MIN_POSITIVE)
            }))
        };
        for (run, label) in [(0, "with cache"), (1, "no cache")] {
            println!(
                "client CPU {label} against the references (median of the rounds' ratios): \
                 {:.2}x the floor, {:.2}x bare reqwest",
                ratio(run, 2),
                ratio(run, 3),
            );
        }
        // The two runs of a round meet the machine in the same state, so
        // their difference swings less than either figure does.
        let added: Vec<f64> = runs[0]
            .iter()
            .zip(&runs[1])
            .map(|(with, without)| per_request(with.cpu) - per_request(without.cpu))
            .collect();
        println!(
            "what the cache adds: {:.1} us/request (median of the rounds' differences: {})",
            median(added.iter().copied()),
            added.iter().map(|d| format!("{d:.0}")).collect::<Vec<_>>().join(", "),
        );
        let judge = judge_with(Some(Arc::clone(&cache)));
        let reruns = 5;
        let (mut wall, mut cpu) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..reruns {
            let (w, c, sources) = run_all(&judge, &last).await;
            assert!(sources.iter().all(|s| *s == Source::Cache));
            wall += w;
            cpu += c;
        }
        let total = n * reruns;
        println!(
            "cached rerun: {total} answers in {:.3} s = {:.0} requests/s, CPU {:.1} us/request",
            wall.as_secs_f64(),
            total as f64 / wall.as_secs_f64(),
            cpu.as_secs_f64() * 1e6 / total as f64
        );
    });
    if let Some(mut server) = child {
        drop(server.stdin.take());
        let _ = server.wait();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
