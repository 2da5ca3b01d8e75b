//! The SQLite cache: reruns make no requests, keys see the model, the API
//! key never reaches the file, single-flight, stats and clear.

use std::sync::Arc;
use std::time::Duration;

use assay_llm::{Cache, ProviderOptions, Source};

use crate::server::{chat, error, Server};
use crate::{client, judge, options, request, temp_dir, verdict_schema, KEY};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_is_served_from_the_cache_with_zero_requests() {
    let dir = temp_dir("rerun");
    let path = dir.path().join("nested").join("cache.sqlite");
    let server =
        Server::start(|r, _| chat(&format!("{{\"verdict\": {}}}", r.last_message().len() % 2)))
            .await;
    let opts = options(&server);
    let requests: Vec<_> = (0..10)
        .map(|i| request(&format!("question {i}")).with_schema(verdict_schema()))
        .collect();
    let first = judge(&opts, Some(Arc::new(Cache::open(&path).unwrap())));
    let mut answers = Vec::new();
    for r in &requests {
        answers.push(first.chat(r).await.unwrap());
    }
    assert_eq!(server.count(), 10);
    drop(first);

    // A new process would open the file afresh.
    let second = judge(&opts, Some(Arc::new(Cache::open(&path).unwrap())));
    for (r, before) in requests.iter().zip(&answers) {
        let again = second.chat(r).await.unwrap();
        assert_eq!(again.source, Source::Cache);
        assert_eq!(
            (&again.text, &again.json, again.usage),
            (&before.text, &before.json, before.usage)
        );
    }
    assert_eq!(server.count(), 10, "the rerun made no request");

    // A different model is a different key.
    let other = assay_llm::Judge::new(
        Arc::new(client(&opts, "another-model")),
        Some(Arc::new(Cache::open(&path).unwrap())),
        1,
    );
    assert_eq!(
        other.chat(&requests[0]).await.unwrap().source,
        Source::Upstream
    );
    assert_eq!(server.count(), 11);
}

/// `--max-tokens` reaches the server and is part of the key: an answer
/// cached without the cap is not served under it, and a request's own
/// `max_tokens` wins over it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_max_tokens_cap_is_sent_and_keyed() {
    let dir = temp_dir("cap");
    let path = dir.path().join("cache.sqlite");
    let server = Server::start(|_, _| chat("{\"verdict\": 1}")).await;
    let opts = options(&server);
    let cache = || Some(Arc::new(Cache::open(&path).unwrap()));
    let req = request("question").with_schema(verdict_schema());
    let plain = judge(&opts, cache());
    assert_eq!(plain.chat(&req).await.unwrap().source, Source::Upstream);
    let capped = judge(&opts, cache()).with_max_tokens(Some(64));
    assert_eq!(capped.chat(&req).await.unwrap().source, Source::Upstream);
    assert_eq!(capped.chat(&req).await.unwrap().source, Source::Cache);
    assert_eq!(plain.chat(&req).await.unwrap().source, Source::Cache);
    let mut own = req.clone();
    own.sampling.max_tokens = Some(8);
    assert_eq!(capped.chat(&own).await.unwrap().source, Source::Upstream);
    let sent: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.body.get("max_tokens").cloned())
        .collect();
    assert_eq!(sent, [None, Some(64.into()), Some(8.into())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_key_appears_nowhere_in_the_cache_files() {
    let dir = temp_dir("secret");
    let path = dir.path().join("cache.sqlite");
    let server = Server::start(|_, _| chat("{\"verdict\": 1}")).await;
    let j = judge(
        &options(&server),
        Some(Arc::new(Cache::open(&path).unwrap())),
    );
    for i in 0..5 {
        j.chat(&request(&format!("q{i}")).with_schema(verdict_schema()))
            .await
            .unwrap();
    }
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "key found in a cache file"
        );
        assert!(
            !bytes.windows(7).any(|w| w == b"sk-test"),
            "a key prefix found"
        );
        files += 1;
    }
    assert!(files >= 1);
    // The answers are in the file, so the search looked at real content.
    let stats = j.cache().unwrap().stats().unwrap();
    assert_eq!(stats.chat_entries, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_answers_are_served_at_once_and_reach_the_table_in_groups() {
    let dir = temp_dir("group");
    let path = dir.path().join("cache.sqlite");
    let server =
        Server::start(|_, _| chat("{\"verdict\": 0}").after(Duration::from_millis(20))).await;
    let opts = options(&server);
    let j = Arc::new(judge(&opts, Some(Arc::new(Cache::open(&path).unwrap()))));
    let other = Cache::open(&path).unwrap();
    let tasks: Vec<_> = (0..60)
        .map(|i| {
            let j = Arc::clone(&j);
            tokio::spawn(async move {
                let req = request(&format!("q{i}")).with_schema(verdict_schema());
                let answer = j.chat(&req).await;
                // Returned means stored: this process serves it from now on.
                (answer, j.lookup(&req))
            })
        })
        .collect();
    for t in tasks {
        let (answer, seen) = t.await.unwrap();
        assert_eq!(answer.unwrap().source, Source::Upstream);
        assert_eq!(seen.unwrap().unwrap().source, Source::Cache);
    }
    assert_eq!(server.count(), 60);
    let key = j.key(&request("q0").with_schema(verdict_schema()));
    // Well within FOLD_EVERY of the answers: not folded yet, so another
    // process does not see them.
    assert_eq!(other.get_chat(&key).unwrap(), None);
    let cache = j.cache().unwrap();
    cache.flush().unwrap();
    let other = other.with_catch_up_interval(Duration::ZERO);
    assert!(other.get_chat(&key).unwrap().is_some());
    assert_eq!(cache.stats().unwrap().chat_entries, 60);
}

/// Runs the body of `test` in a child process of this test binary (with
/// `ASSAY_IT_CHILD` set to `dir`), which must end by aborting; returns
/// what it printed.
fn run_child(test: &str, dir: &std::path::Path) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env("ASSAY_IT_CHILD", dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !out.status.success(),
        "the child aborted: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A process killed right after its answers came back (here: it aborts,
/// running no destructor) loses none of them: the next process to open
/// the cache folds the dead one's log, a torn last record included, and
/// answers from it, without storing twice what was folded before; cleared
/// answers stay cleared.
#[test]
fn answers_survive_their_process_being_killed_at_once() {
    let kept = |i: usize| request(&format!("kept {i}")).with_schema(verdict_schema());
    let test = "cache::answers_survive_their_process_being_killed_at_once";
    if let Some(dir) = std::env::var_os("ASSAY_IT_CHILD") {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let server = Server::start(|_, _| chat("{\"verdict\": 1}")).await;
            let path = std::path::Path::new(&dir).join("cache.sqlite");
            let j = judge(
                &options(&server),
                Some(Arc::new(Cache::open(&path).unwrap())),
            );
            for i in 0..3 {
                j.chat(&request(&format!("cleared {i}"))).await.unwrap();
            }
            j.cache().unwrap().clear().unwrap();
            for i in 0..20 {
                j.chat(&kept(i)).await.unwrap();
            }
            // Folded by the folder thread in its time (the log keeps them
            // too), as another process sees; then 5 more, still unfolded.
            let other = Cache::open(&path)
                .unwrap()
                .with_catch_up_interval(Duration::ZERO);
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while other.get_chat(&j.key(&kept(19))).unwrap().is_none() {
                assert!(std::time::Instant::now() < deadline, "never folded");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            for i in 20..25 {
                j.chat(&kept(i)).await.unwrap();
            }
            println!("\nurl={}", server.base_url());
            // Killed with its cache open: no destructor runs.
            std::process::abort();
        });
    }
    let dir = temp_dir("killed");
    let stdout = run_child(test, dir.path());
    let url = stdout
        .lines()
        .find_map(|l| l.strip_prefix("url="))
        .expect("the child's server address");
    let logs = || -> Vec<_> {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains("cache.sqlite-log-"))
            .collect()
    };
    // The judge's log, and the empty one of the cache that watched it.
    let left = logs();
    assert_eq!(left.len(), 2, "the dead process left its logs");
    let full = left
        .iter()
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    // Half a record, as a machine crash in the middle of a write leaves.
    let mut torn = std::fs::read(full).unwrap();
    let half = torn[..torn.len() / 40].to_vec();
    torn.extend_from_slice(&half);
    std::fs::write(full, torn).unwrap();

    let path = dir.path().join("cache.sqlite");
    let cache = Cache::open(&path).unwrap();
    assert_eq!(logs().len(), 1, "folded and removed; the new cache's own");
    let opts = ProviderOptions {
        base_url: Some(url.to_owned()),
        ..ProviderOptions::default()
    };
    let j = judge(&opts, Some(Arc::new(cache)));
    for i in 0..25 {
        let answer = j.lookup(&kept(i)).unwrap().expect("kept");
        assert_eq!(answer.json, Some(serde_json::json!({"verdict": 1})));
    }
    for i in 0..3 {
        assert_eq!(j.lookup(&request(&format!("cleared {i}"))).unwrap(), None);
    }
    // The rows folded before the process died are not stored twice.
    assert_eq!(j.cache().unwrap().stats().unwrap().chat_entries, 25);
}

/// A process's log lives as long as its cache: gone once the cache is
/// dropped, and never taken for a dead process's log while it lives.
#[test]
fn a_live_process_s_log_is_left_alone_and_removed_with_its_cache() {
    let dir = temp_dir("log-life");
    let path = dir.path().join("c.sqlite");
    let logs = || logs_in(dir.path());
    let ours = Cache::open(&path).unwrap();
    let key = crate::judge(&ProviderOptions::default(), None).key(&request("a"));
    ours.store_chat(&key, "m", &answer("kept")).unwrap();
    // Another process opening the cache now must not fold ours.
    let theirs = Cache::open(&path)
        .unwrap()
        .with_catch_up_interval(Duration::ZERO);
    assert_eq!(logs(), 2);
    assert_eq!(theirs.get_chat(&key).unwrap(), None);
    assert_eq!(text_of(&ours, &key).as_deref(), Some("kept"));
    drop(ours);
    assert_eq!(logs(), 1, "ours folded and removed");
    assert_eq!(text_of(&theirs, &key).as_deref(), Some("kept"));
    drop(theirs);
    assert_eq!(logs(), 0);
}

#[test]
fn a_draft_log_left_by_a_killed_process_is_removed_once_stale() {
    let dir = temp_dir("drafts");
    let path = dir.path().join("c.sqlite");
    let draft = |n: u32, age: Duration| {
        let draft = dir.path().join(format!("c.sqlite-new-4194305-{n}"));
        let file = std::fs::File::create(&draft).unwrap();
        file.set_modified(std::time::SystemTime::now() - age)
            .unwrap();
        draft
    };
    let hour = Duration::from_secs(3600);
    let stale = draft(1, hour);
    let fresh = draft(2, Duration::ZERO);
    let held = draft(3, hour);
    // Held as its creator holds it until the rename (a lock of its own).
    let holder = std::fs::File::open(&held).unwrap();
    holder.try_lock().unwrap();

    let cache = Cache::open(&path).unwrap();
    assert!(!stale.exists(), "an old, unlocked draft is removed");
    assert!(
        fresh.exists(),
        "a draft may be about to be locked and renamed"
    );
    assert!(held.exists(), "a draft its creator holds is left alone");
    // Only drafts: the cache's own log is untouched.
    assert_eq!(logs_in(dir.path()), 1);
    drop(cache);
}

#[test]
fn files_that_only_start_like_a_log_or_a_draft_are_left_alone() {
    let dir = temp_dir("look-alikes");
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    let names = ["c.sqlite-log-old", "c.sqlite-log-1-2-3", "c.sqlite-new-db"];
    for name in names {
        let file = std::fs::File::create(dir.path().join(name)).unwrap();
        std::io::Write::write_all(&mut &file, b"someone else's bytes").unwrap();
        file.set_modified(old).unwrap();
    }
    drop(Cache::open(dir.path().join("c.sqlite")).unwrap());
    for name in names {
        let bytes = std::fs::read(dir.path().join(name)).unwrap();
        assert_eq!(bytes, b"someone else's bytes", "{name}");
    }
}

/// How many logs of a cache called `c.sqlite` lie in `dir`.
fn logs_in(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("c.sqlite-log-")
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_concurrent_requests_make_one_upstream_call() {
    let server =
        Server::start(|_, _| chat("{\"verdict\": 1}").after(Duration::from_millis(300))).await;
    let j = Arc::new(judge(&options(&server), None));
    let req = request("same").with_schema(verdict_schema());
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (j, req) = (Arc::clone(&j), req.clone());
            tokio::spawn(async move { j.chat(&req).await })
        })
        .collect();
    let mut sources = Vec::new();
    for t in tasks {
        sources.push(t.await.unwrap().unwrap().source);
    }
    assert_eq!(server.count(), 1);
    assert_eq!(
        sources.iter().filter(|s| **s == Source::Upstream).count(),
        1
    );
    assert_eq!(
        sources.iter().filter(|s| **s == Source::Coalesced).count(),
        19
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_not_cached_and_stats_and_clear_work() {
    let dir = temp_dir("stats");
    let server = Server::start(|r, _| match r.last_message() {
        "bad" => error(404, "nope"),
        _ => chat("{\"verdict\": 0}"),
    })
    .await;
    let cache = Arc::new(Cache::open(dir.path().join("c.sqlite")).unwrap());
    let j = judge(&options(&server), Some(Arc::clone(&cache)));
    assert!(j.chat(&request("bad")).await.is_err());
    assert!(j.chat(&request("bad")).await.is_err());
    assert_eq!(server.count(), 2, "a failure is asked again");
    j.chat(&request("good")).await.unwrap();
    let stats = cache.stats().unwrap();
    assert_eq!(
        (
            stats.chat_entries,
            stats.prompt_tokens,
            stats.completion_tokens
        ),
        (1, 11, 7)
    );
    assert!(stats.file_bytes > 0);
    assert_eq!(cache.clear().unwrap(), 1);
    assert_eq!(cache.stats().unwrap().chat_entries, 0);
    assert_eq!(
        j.chat(&request("good")).await.unwrap().source,
        Source::Upstream
    );
}

#[test]
fn a_cache_of_another_format_version_is_refused() {
    let dir = temp_dir("version");
    let path = dir.path().join("c.sqlite");
    drop(Cache::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE meta SET value = '99' WHERE name = 'format_version'",
        [],
    )
    .unwrap();
    drop(conn);
    let err = Cache::open(&path).unwrap_err();
    assert_eq!(err.kind(), assay_llm::FailureKind::Cache);
    assert!(err.detail().contains("format 99"), "{}", err.detail());
}

#[test]
fn a_corrupt_row_is_dropped_and_reported_as_a_miss() {
    let dir = temp_dir("corrupt");
    let path = dir.path().join("c.sqlite");
    let cache = Cache::open(&path).unwrap();
    let key = assay_llm::RequestKey::parse(&"ab".repeat(32)).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO chat (key, model, response, prompt_tokens, completion_tokens, latency_us, created_at)
         VALUES (?1, 'm', '{not an answer', 0, 0, 0, 0)",
        [&key.digest()[..]],
    )
    .unwrap();
    assert_eq!(cache.get_chat(&key).unwrap(), None);
    assert_eq!(
        cache.stats().unwrap().chat_entries,
        0,
        "the corrupt row was deleted"
    );
}

/// An in-process judge's choice probabilities are stored with its answer
/// and come back per pointer; a row written before they were kept (no
/// such field) still loads, without them.
#[test]
fn choice_probabilities_are_cached_and_old_rows_without_them_load() {
    use assay_llm::{ChatResponse, ChoicePoint, Usage};
    let dir = temp_dir("choices");
    let path = dir.path().join("c.sqlite");
    let cache = Cache::open(&path).unwrap();
    let key = assay_llm::RequestKey::parse(&"cd".repeat(32)).unwrap();
    let answer = ChatResponse {
        json: Some(serde_json::json!({"rating": 4})),
        usage: Usage {
            prompt_tokens: 20,
            completion_tokens: 5,
        },
        latency: Duration::from_millis(1500),
        choice_probabilities: Some(vec![ChoicePoint {
            pointer: "/rating".into(),
            probabilities: vec![("4".into(), 0.75), ("5".into(), 0.25)],
        }]),
        ..answer(r#"{"rating":4}"#)
    };
    cache.put_chat(&key, "m", &answer).unwrap();
    let back = cache.get_chat(&key).unwrap().unwrap();
    assert_eq!(back.source, Source::Cache);
    assert_eq!(back.choice_probabilities, answer.choice_probabilities);

    let old_key = assay_llm::RequestKey::parse(&"ef".repeat(32)).unwrap();
    let mut old_row = serde_json::to_value(&answer).unwrap();
    old_row
        .as_object_mut()
        .unwrap()
        .remove("choice_probabilities");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO chat (key, model, response, prompt_tokens, completion_tokens, latency_us, created_at)
         VALUES (?1, 'm', ?2, 20, 5, 1500000, 0)",
        rusqlite::params![&old_key.digest()[..], old_row.to_string()],
    )
    .unwrap();
    let old = cache
        .get_chat(&old_key)
        .unwrap()
        .expect("the old row loads");
    assert_eq!(old.choice_probabilities, None);
    assert_eq!(old.json, answer.json);
}

fn answer(text: &str) -> assay_llm::ChatResponse {
    use assay_llm::{ChatResponse, FinishReason, Usage};
    ChatResponse {
        text: text.into(),
        json: None,
        finish_reason: FinishReason::Stop,
        usage: Usage {
            prompt_tokens: 3,
            completion_tokens: 2,
        },
        latency: Duration::from_millis(5),
        source: Source::Upstream,
        logprobs: None,
        choice_probabilities: None,
    }
}

fn text_of(cache: &Cache, key: &assay_llm::RequestKey) -> Option<String> {
    cache.get_chat(key).unwrap().map(|a| a.text)
}

/// Two caches on one new file, as two processes would open it: ours
/// catching up at most every `every`, theirs with the default; the file's
/// path, and its folder (removed when dropped).
fn ours_and_theirs(
    name: &str,
    every: Duration,
) -> (Cache, Cache, std::path::PathBuf, tempfile::TempDir) {
    let dir = temp_dir(name);
    let path = dir.path().join("c.sqlite");
    let ours = Cache::open(&path).unwrap().with_catch_up_interval(every);
    (ours, Cache::open(&path).unwrap(), path, dir)
}

/// Each cache keeps its own index of the file; rows another process
/// appends or deletes after that index was read are still found, or
/// missed, as they are in the file.
#[test]
fn rows_appended_or_removed_by_another_process_are_seen() {
    let (ours, theirs, _, _dir) = ours_and_theirs("shared", Duration::ZERO);
    let key = assay_llm::RequestKey::parse(&"12".repeat(32)).unwrap();
    assert_eq!(text_of(&ours, &key), None, "our index is read, empty");
    theirs.put_chat(&key, "m", &answer("theirs")).unwrap();
    assert_eq!(text_of(&ours, &key).as_deref(), Some("theirs"));
    theirs.clear().unwrap();
    assert_eq!(text_of(&ours, &key), None, "a cleared row is a miss");
    ours.put_chat(&key, "m", &answer("again")).unwrap();
    assert_eq!(text_of(&theirs, &key).as_deref(), Some("again"));
}

/// Our own commits move the point the catch-up reads from only past rows
/// it need not read: another process's row appended just before ours, or
/// just after, is still found.
#[test]
fn another_process_s_rows_next_to_ours_are_found() {
    let (ours, theirs, _, _dir) = ours_and_theirs("interleaved", Duration::ZERO);
    let key = |b: &str| assay_llm::RequestKey::parse(&b.repeat(32)).unwrap();
    assert_eq!(text_of(&ours, &key("01")), None, "our index is read, empty");
    theirs
        .put_chat(&key("01"), "m", &answer("theirs before"))
        .unwrap();
    ours.put_chat(&key("02"), "m", &answer("ours")).unwrap();
    assert_eq!(text_of(&ours, &key("01")).as_deref(), Some("theirs before"));
    ours.put_chat(&key("03"), "m", &answer("ours again"))
        .unwrap();
    theirs
        .put_chat(&key("04"), "m", &answer("theirs after"))
        .unwrap();
    assert_eq!(text_of(&ours, &key("04")).as_deref(), Some("theirs after"));
    for (k, text) in [("02", "ours"), ("03", "ours again")] {
        assert_eq!(text_of(&ours, &key(k)).as_deref(), Some(text));
    }
}

/// Within the catch-up interval, a lookup that misses the index does not
/// read the file again: another process's new row is a miss (fetched
/// again, never wrong) until the interval has passed, while this cache's
/// own rows are found at once.
#[test]
fn another_process_s_rows_are_read_at_most_once_per_catch_up_interval() {
    let (ours, theirs, path, _dir) = ours_and_theirs("interval", Duration::from_secs(3600));
    let (key, own) = (
        assay_llm::RequestKey::parse(&"9a".repeat(32)).unwrap(),
        assay_llm::RequestKey::parse(&"bc".repeat(32)).unwrap(),
    );
    assert_eq!(text_of(&ours, &key), None, "the first miss reads the file");
    theirs.put_chat(&key, "m", &answer("theirs")).unwrap();
    assert_eq!(text_of(&ours, &key), None, "not read again within the hour");
    ours.put_chat(&own, "m", &answer("ours")).unwrap();
    assert_eq!(text_of(&ours, &own).as_deref(), Some("ours"));
    let later = Cache::open(&path).unwrap();
    assert_eq!(text_of(&later, &key).as_deref(), Some("theirs"));
}

/// Storing a key again replaces its answer (one row), and two keys that
/// share the first 8 bytes the index goes by never get each other's answer.
#[test]
fn a_stored_key_is_replaced_and_keys_sharing_a_prefix_stay_apart() {
    let dir = temp_dir("replace");
    let path = dir.path().join("c.sqlite");
    let cache = Cache::open(&path).unwrap();
    let key = assay_llm::RequestKey::parse(&"34".repeat(32)).unwrap();
    cache.put_chat(&key, "m", &answer("first")).unwrap();
    cache.put_chat(&key, "m", &answer("second")).unwrap();
    assert_eq!(text_of(&cache, &key).as_deref(), Some("second"));
    assert_eq!(cache.stats().unwrap().chat_entries, 1);
    let reopened = Cache::open(&path).unwrap();
    assert_eq!(text_of(&reopened, &key).as_deref(), Some("second"));

    let twin =
        assay_llm::RequestKey::parse(&format!("{}{}", "34".repeat(8), "56".repeat(24))).unwrap();
    cache.put_chat(&twin, "m", &answer("twin")).unwrap();
    assert_eq!(text_of(&cache, &twin).as_deref(), Some("twin"));
    assert_ne!(text_of(&cache, &key).as_deref(), Some("twin"));
    assert_eq!(
        cache.stats().unwrap().chat_entries,
        2,
        "the twin replaced nothing"
    );
}

/// A file of the first format (chat keyed by hex text) is converted when
/// opened: its answers are served, and the file says format 2.
#[test]
fn a_version_1_cache_file_is_converted_and_its_answers_served() {
    let dir = temp_dir("v1");
    let path = dir.path().join("c.sqlite");
    let key = assay_llm::RequestKey::parse(&"78".repeat(32)).unwrap();
    let row = serde_json::to_string(&answer("kept")).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
         INSERT INTO meta VALUES ('format_version', '1');
         CREATE TABLE chat (
             key TEXT PRIMARY KEY, model TEXT NOT NULL, response TEXT NOT NULL,
             prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
             latency_us INTEGER NOT NULL, created_at INTEGER NOT NULL);
         CREATE TABLE embedding (
             key TEXT PRIMARY KEY, model TEXT NOT NULL, vector BLOB NOT NULL,
             created_at INTEGER NOT NULL);",
    )
    .unwrap();
    conn.execute(
        "INSERT INTO chat VALUES (?1, 'm', ?2, 3, 2, 5000, 0)",
        [key.as_str(), &row],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO embedding VALUES (?1, 'e', ?2, 0)",
        rusqlite::params![key.as_str(), 1.0f32.to_le_bytes().to_vec()],
    )
    .unwrap();
    drop(conn);

    let cache = Cache::open(&path).unwrap();
    assert_eq!(text_of(&cache, &key).as_deref(), Some("kept"));
    assert_eq!(cache.get_embedding(&key).unwrap(), Some(vec![1.0]));
    let stats = cache.stats().unwrap();
    assert_eq!((stats.chat_entries, stats.prompt_tokens), (1, 3));
    drop(cache);
    let version: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT value FROM meta WHERE name = 'format_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(version, "2");
}

/// 64 keys in 8 groups that share the 8 bytes the index goes by.
fn shared_keys() -> Vec<assay_llm::RequestKey> {
    (0..64u64)
        .map(|i| {
            let hex = format!("{:016x}{:048x}", (i / 8 + 1) * 0x0101_0101, i % 8 + 1);
            assay_llm::RequestKey::parse(&hex).unwrap()
        })
        .collect()
}

/// The vector stored for `key` by `writer`: its first element names the
/// key, so a vector found under another key shows.
fn vector_of(i: usize, writer: u64) -> Vec<f32> {
    vec![i as f32, writer as f32, 0.5]
}

/// Several processes at once storing (in a transaction, and through their
/// logs as a judge does), reading, flushing, clearing and reopening one
/// cache file, and one of them killed with answers in its log: no lookup
/// ever returns an answer or a vector stored for another key (keys share
/// the index's 8-byte prefixes), the processes find answers each other
/// stored, and the file afterwards holds only right answers, the killed
/// process's included. `ASSAY_STRESS_ROUNDS` (default 1500) sets each
/// process's operations, for longer runs.
#[test]
fn processes_sharing_a_cache_never_get_another_key_s_answer() {
    let test = "cache::processes_sharing_a_cache_never_get_another_key_s_answer";
    let keys = shared_keys();
    if let Some(dir) = std::env::var_os("ASSAY_IT_CHILD") {
        let writer: u64 = std::env::var("ASSAY_IT_WRITER").unwrap().parse().unwrap();
        let rounds: u64 = std::env::var("ASSAY_STRESS_ROUNDS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1500);
        let path = std::path::Path::new(&dir).join("c.sqlite");
        // Released with the others when the test closes our input: all
        // open the new file at once.
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new()).unwrap();
        let open = || {
            let cache = Cache::open(&path).unwrap();
            // Half the processes catch up on every miss, half every 100 ms.
            if writer % 2 == 1 {
                cache.with_catch_up_interval(Duration::ZERO)
            } else {
                cache
            }
        };
        let mut cache = open();
        let mut rng = assay_core::aggregate::SplitMix64(writer);
        let (mut found, mut theirs, mut wrong) = (0, 0, Vec::new());
        for round in 0..rounds {
            let r = rng.next_u64();
            let i = (r % 64) as usize;
            let key = &keys[i];
            match (r >> 8) % 100 {
                0..=19 => cache
                    .put_chat(key, "m", &answer(&format!("{i}/{writer}/{round}")))
                    .unwrap(),
                20..=39 => cache
                    .store_chat(key, "m", &answer(&format!("{i}/{writer}/{round}")))
                    .unwrap(),
                40..=49 => cache
                    .put_embedding(key, "e", &vector_of(i, writer))
                    .unwrap(),
                50..=59 => {
                    if let Some(v) = cache.get_embedding(key).unwrap() {
                        if v.first() != Some(&(i as f32)) {
                            wrong.push(format!("vector of key {i}: {v:?}"));
                        }
                    }
                }
                60..=96 => {
                    if let Some(a) = cache.get_chat(key).unwrap() {
                        found += 1;
                        let mut parts = a.text.split('/');
                        if parts.next() != Some(&i.to_string()) {
                            wrong.push(format!("answer of key {i}: {}", a.text));
                        } else if parts.next() != Some(&writer.to_string()) {
                            theirs += 1;
                        }
                    }
                }
                97 => cache.flush().unwrap(),
                98 if (r >> 16).is_multiple_of(8) => {
                    cache.clear().unwrap();
                }
                _ => {
                    drop(cache);
                    cache = open();
                }
            }
        }
        println!("\nfound={found} theirs={theirs} wrong={}", wrong.len());
        for w in &wrong {
            println!("wrong: {w}");
        }
        if writer == 0 {
            // Killed with answers in its log and no destructor run.
            std::process::abort();
        }
        return;
    }
    let dir = temp_dir("processes");
    let mut children: Vec<_> = (0..4)
        .map(|writer| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args([test, "--exact", "--nocapture", "--test-threads", "1"])
                .env("ASSAY_IT_CHILD", dir.path())
                .env("ASSAY_IT_WRITER", writer.to_string())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in &mut children {
        drop(child.stdin.take());
    }
    let mut theirs_in_all = 0;
    for (writer, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.success(),
            writer != 0,
            "process {writer}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let counts = stdout
            .lines()
            .find(|l| l.starts_with("found="))
            .unwrap_or_else(|| panic!("process {writer} gave no counts: {stdout}"));
        assert!(counts.ends_with(" wrong=0"), "process {writer}: {stdout}");
        let theirs: u64 = counts.split(' ').nth(1).unwrap()["theirs=".len()..]
            .parse()
            .unwrap();
        theirs_in_all += theirs;
    }
    assert!(theirs_in_all > 0, "no process found another's answer");
    let cache = Cache::open(dir.path().join("c.sqlite")).unwrap();
    let mut stored = 0;
    for (i, key) in keys.iter().enumerate() {
        if let Some(a) = cache.get_chat(key).unwrap() {
            stored += 1;
            assert_eq!(a.text.split('/').next(), Some(i.to_string().as_str()));
        }
        if let Some(v) = cache.get_embedding(key).unwrap() {
            assert_eq!(v.first(), Some(&(i as f32)));
        }
    }
    assert!(stored > 0, "the processes' last answers are in the file");
}
