//! The response cache: one SQLite file in WAL mode.
//!
//! Only validated answers are stored, keyed by [`RequestKey`]; a row that no
//! longer decodes is deleted and reported as a miss, so it is fetched again.
//! Rows hold the answer, its usage and latency, and the model name, never a
//! header or key.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, TryLockError};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::oneshot;

use crate::key::RequestKey;
use crate::model::{ChatResponse, Source};
use crate::spec::CacheLocation;
use crate::{Error, ErrorKind};

/// Version of the table layout, stored in the file's `meta` table.
pub const CACHE_FORMAT_VERSION: u32 = 1;

/// Read connections per cache: WAL lets them read in parallel with each
/// other and with the writer, so lookups do not queue behind one lock.
const READERS: usize = 4;

/// Most rows committed in one group transaction.
const MAX_GROUP: usize = 512;

type Commit = (ChatRow, oneshot::Sender<Result<(), Error>>);

/// An open cache file, shareable across tasks.
#[derive(Debug)]
pub struct Cache {
    path: PathBuf,
    writer: Arc<Mutex<Connection>>,
    commits: mpsc::Sender<Commit>,
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
}

/// What [`Cache::stats`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheStats {
    /// The cache file.
    pub path: PathBuf,
    /// Stored chat answers.
    pub chat_entries: u64,
    /// Stored embedding vectors.
    pub embedding_entries: u64,
    /// Prompt tokens the stored answers cost when first fetched.
    pub prompt_tokens: u64,
    /// Completion tokens the stored answers cost when first fetched.
    pub completion_tokens: u64,
    /// Size of the database file plus its write-ahead log, in bytes.
    pub file_bytes: u64,
}

impl Cache {
    /// Opens (creating if needed) the cache file at `path`, with its parent folders.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                Error::new(
                    ErrorKind::Cache,
                    format!("cannot create {}: {e}", parent.display()),
                )
            })?;
        }
        let conn = Connection::open(&path)?;
        // WAL lets readers go on while one writer appends; NORMAL sync is
        // durable across process crashes, which is what a killed run needs.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS chat (
                 key TEXT PRIMARY KEY, model TEXT NOT NULL, response TEXT NOT NULL,
                 prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
                 latency_us INTEGER NOT NULL, created_at INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS embedding (
                 key TEXT PRIMARY KEY, model TEXT NOT NULL, vector BLOB NOT NULL,
                 created_at INTEGER NOT NULL);",
        )?;
        let version: Option<String> = conn
            .query_row(
                "SELECT value FROM meta WHERE name = 'format_version'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        match version {
            None => {
                conn.execute(
                    "INSERT INTO meta (name, value) VALUES ('format_version', ?1)",
                    [CACHE_FORMAT_VERSION.to_string()],
                )?;
            }
            Some(v) if v == CACHE_FORMAT_VERSION.to_string() => {}
            Some(v) => {
                return Err(Error::new(
                    ErrorKind::Cache,
                    format!(
                    "{} has cache format {v}, this build reads {CACHE_FORMAT_VERSION}; clear it",
                    path.display()
                ),
                ))
            }
        }
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            let reader = Connection::open(&path)?;
            reader.busy_timeout(std::time::Duration::from_secs(10))?;
            readers.push(Mutex::new(reader));
        }
        let writer = Arc::new(Mutex::new(conn));
        let (commits, queue) = mpsc::channel();
        let group_writer = Arc::clone(&writer);
        // The thread ends when the cache (the only sender) is dropped.
        std::thread::Builder::new()
            .name("assay-cache-writer".into())
            .spawn(move || group_commit(&group_writer, &queue))
            .map_err(|e| Error::new(ErrorKind::Cache, format!("cannot start cache writer: {e}")))?;
        Ok(Cache {
            path,
            writer,
            commits,
            readers,
            next_reader: AtomicUsize::new(0),
        })
    }

    /// Opens the cache `location` names; `None` when it is disabled.
    pub fn open_location(location: &CacheLocation) -> Result<Option<Self>, Error> {
        location.resolve()?.map(Cache::open).transpose()
    }

    /// The file this cache lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn writer(&self) -> Result<MutexGuard<'_, Connection>, Error> {
        self.writer.lock().map_err(|_| poisoned())
    }

    /// A free read connection, else the next one in turn.
    fn reader(&self) -> Result<MutexGuard<'_, Connection>, Error> {
        for r in &self.readers {
            match r.try_lock() {
                Ok(guard) => return Ok(guard),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Poisoned(_)) => return Err(poisoned()),
            }
        }
        let i = self.next_reader.fetch_add(1, Ordering::Relaxed) % self.readers.len();
        self.readers[i].lock().map_err(|_| poisoned())
    }

    /// Deletes a row that no longer decodes, so it is fetched again.
    fn drop_row(&self, table: Table, key: &RequestKey) -> Result<(), Error> {
        let sql = match table {
            Table::Chat => "DELETE FROM chat WHERE key = ?1",
            Table::Embedding => "DELETE FROM embedding WHERE key = ?1",
        };
        self.writer()?
            .prepare_cached(sql)?
            .execute([key.as_str()])?;
        Ok(())
    }

    /// The stored answer for `key`, marked [`Source::Cache`].
    pub fn get_chat(&self, key: &RequestKey) -> Result<Option<ChatResponse>, Error> {
        let row: Option<String> = self
            .reader()?
            .prepare_cached("SELECT response FROM chat WHERE key = ?1")?
            .query_row([key.as_str()], |r| r.get(0))
            .optional()?;
        let Some(row) = row else { return Ok(None) };
        match serde_json::from_str::<ChatResponse>(&row) {
            Ok(mut resp) => {
                resp.source = Source::Cache;
                Ok(Some(resp))
            }
            Err(_) => {
                self.drop_row(Table::Chat, key)?;
                Ok(None)
            }
        }
    }

    /// Stores a validated answer under `key` (replacing any older row),
    /// in a transaction of its own.
    pub fn put_chat(
        &self,
        key: &RequestKey,
        model: &str,
        response: &ChatResponse,
    ) -> Result<(), Error> {
        let row = ChatRow::new(key, model, response)?;
        insert_chat(&*self.writer()?, &row)
    }

    /// Stores a validated answer like [`Cache::put_chat`], but through the
    /// group-commit writer: answers completing at the same time share one
    /// transaction, so many concurrent requests do not pay one commit each.
    /// Returns once the row is committed.
    pub async fn store_chat(
        &self,
        key: &RequestKey,
        model: &str,
        response: &ChatResponse,
    ) -> Result<(), Error> {
        let row = ChatRow::new(key, model, response)?;
        let (done, committed) = oneshot::channel();
        let stopped = || Error::new(ErrorKind::Cache, "the cache writer has stopped");
        self.commits.send((row, done)).map_err(|_| stopped())?;
        committed.await.map_err(|_| stopped())?
    }

    /// The stored unit vector for `key`.
    pub fn get_embedding(&self, key: &RequestKey) -> Result<Option<Vec<f32>>, Error> {
        let blob: Option<Vec<u8>> = self
            .reader()?
            .prepare_cached("SELECT vector FROM embedding WHERE key = ?1")?
            .query_row([key.as_str()], |r| r.get(0))
            .optional()?;
        let Some(blob) = blob else { return Ok(None) };
        if blob.is_empty() || blob.len() % 4 != 0 {
            self.drop_row(Table::Embedding, key)?;
            return Ok(None);
        }
        Ok(Some(
            blob.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ))
    }

    /// Stores a unit vector under `key`.
    pub fn put_embedding(
        &self,
        key: &RequestKey,
        model: &str,
        vector: &[f32],
    ) -> Result<(), Error> {
        let blob: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.writer()?
            .prepare_cached(
                "INSERT OR REPLACE INTO embedding (key, model, vector, created_at) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![key.as_str(), model, blob, now_secs()])?;
        Ok(())
    }

    /// Counts of what is stored (`assay cache stats`).
    pub fn stats(&self) -> Result<CacheStats, Error> {
        let conn = self.writer()?;
        let (chat_entries, prompt_tokens, completion_tokens): (i64, i64, i64) = conn.query_row(
            "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0) FROM chat",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let embedding_entries: i64 =
            conn.query_row("SELECT COUNT(*) FROM embedding", [], |r| r.get(0))?;
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        Ok(CacheStats {
            path: self.path.clone(),
            chat_entries: u64::try_from(chat_entries).unwrap_or(0),
            embedding_entries: u64::try_from(embedding_entries).unwrap_or(0),
            prompt_tokens: u64::try_from(prompt_tokens).unwrap_or(0),
            completion_tokens: u64::try_from(completion_tokens).unwrap_or(0),
            file_bytes: size(&self.path) + size(Path::new(&wal)),
        })
    }

    /// Removes every stored answer and vector and shrinks the file
    /// (`assay cache clear`). Returns how many rows were removed.
    pub fn clear(&self) -> Result<u64, Error> {
        let conn = self.writer()?;
        let removed =
            conn.execute("DELETE FROM chat", [])? + conn.execute("DELETE FROM embedding", [])?;
        conn.execute_batch("VACUUM; PRAGMA wal_checkpoint(TRUNCATE);")?;
        Ok(removed as u64)
    }
}

/// A chat answer encoded for its table row.
#[derive(Debug)]
struct ChatRow {
    key: String,
    model: String,
    response: String,
    prompt_tokens: i64,
    completion_tokens: i64,
    latency_us: i64,
}

impl ChatRow {
    fn new(key: &RequestKey, model: &str, response: &ChatResponse) -> Result<Self, Error> {
        let json = serde_json::to_string(response)
            .map_err(|e| Error::new(ErrorKind::Cache, format!("cannot encode answer: {e}")))?;
        Ok(ChatRow {
            key: key.as_str().to_owned(),
            model: model.to_owned(),
            response: json,
            prompt_tokens: clamp_i64(response.usage.prompt_tokens),
            completion_tokens: clamp_i64(response.usage.completion_tokens),
            latency_us: clamp_i64(u64::try_from(response.latency.as_micros()).unwrap_or(u64::MAX)),
        })
    }
}

fn insert_chat(conn: &Connection, row: &ChatRow) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO chat
         (key, model, response, prompt_tokens, completion_tokens, latency_us, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        row.key,
        row.model,
        row.response,
        row.prompt_tokens,
        row.completion_tokens,
        row.latency_us,
        now_secs(),
    ])?;
    Ok(())
}

/// Takes whatever rows are waiting (up to [`MAX_GROUP`]), commits them in
/// one transaction and tells every waiter the outcome.
fn group_commit(writer: &Mutex<Connection>, queue: &mpsc::Receiver<Commit>) {
    while let Ok(first) = queue.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match queue.try_recv() {
                Ok(next) => group.push(next),
                Err(_) => break,
            }
        }
        let result = commit_rows(writer, group.iter().map(|(row, _)| row));
        for (_, done) in group {
            // A waiter that went away no longer needs the outcome.
            let _ = done.send(result.clone());
        }
    }
}

fn commit_rows<'a>(
    writer: &Mutex<Connection>,
    mut rows: impl Iterator<Item = &'a ChatRow>,
) -> Result<(), Error> {
    let conn = writer.lock().map_err(|_| poisoned())?;
    // Cached statements: `Connection::transaction` parses BEGIN and COMMIT
    // anew for every group.
    conn.prepare_cached("BEGIN")?.execute([])?;
    let inserted = rows.try_for_each(|row| insert_chat(&conn, row));
    match inserted.and_then(|()| Ok(conn.prepare_cached("COMMIT")?.execute([])?)) {
        Ok(_) => Ok(()),
        Err(e) => {
            // Leaves the connection usable for the next group.
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Table {
    Chat,
    Embedding,
}

fn poisoned() -> Error {
    Error::new(ErrorKind::Cache, "cache lock poisoned")
}

fn clamp_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| clamp_i64(d.as_secs()))
        .unwrap_or(0)
}
