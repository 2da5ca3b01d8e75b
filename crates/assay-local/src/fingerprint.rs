//! Names of local models that are the same on every machine: file name and
//! SHA-256, never the path. The name is the `endpoint` of a local model's
//! identity, so it is part of cache keys, run signatures and manifests; a
//! path there would make the same run on two machines incomparable.
//!
//! Hashing the default judge (about 490 MB) takes seconds, so the hash is
//! kept beside the file in `<file>.sha256` and trusted while the file's
//! size and modification time are the ones recorded with it.

use std::fs::{self, File, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::UNIX_EPOCH;

use sha2::{Digest, Sha256};

/// A sidecar is three short lines; anything longer is not one.
const SIDECAR_MAX: u64 = 256;

/// `NAME@sha256:HEX` for a model that is one file (a GGUF judge).
pub(crate) fn file_identity(path: &Path) -> io::Result<String> {
    Ok(format!(
        "{}@sha256:{}",
        file_name(path),
        sha256_cached(path)?
    ))
}

/// `NAME@sha256:HEX` for a model made of `files` in `dir` (the embedder),
/// `NAME` being the directory's. HEX hashes the `sha256sum` listing of the
/// files sorted by name (`HEX  FILE\n` each): one hash over exactly the
/// files that define the model and not whatever else the directory holds
/// (sidecars, notes), reproducible with
/// `cd DIR && sha256sum config.json model.safetensors tokenizer.json | sha256sum`.
pub(crate) fn dir_identity(dir: &Path, files: &[&str]) -> io::Result<String> {
    let mut files = files.to_vec();
    files.sort_unstable();
    let mut listing = String::new();
    for f in files {
        listing.push_str(&format!("{}  {f}\n", sha256_cached(&dir.join(f))?));
    }
    Ok(format!(
        "{}@sha256:{:x}",
        file_name(dir),
        Sha256::digest(listing.as_bytes())
    ))
}

/// The last component of `path`; for a path without one (`models/..`),
/// that of the directory it resolves to. Never the path itself.
pub(crate) fn file_name(path: &Path) -> String {
    let last = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    last(path)
        .or_else(|| path.canonicalize().ok().as_deref().and_then(last))
        .unwrap_or_else(|| "model".to_owned())
}

/// The lower-case hex SHA-256 of the file at `path`: from its sidecar when
/// that is current, else computed and the sidecar (re)written. Failing to
/// write the sidecar (a read-only directory, a full disk) only costs
/// hashing again next time, so it is not an error.
pub(crate) fn sha256_cached(path: &Path) -> io::Result<String> {
    let stamp = Stamp::of(&fs::metadata(path)?);
    let sidecar = with_suffix(path, ".sha256");
    if let Some(hex) = stamp.as_ref().and_then(|s| read_sidecar(&sidecar, s)) {
        return Ok(hex);
    }
    let hex = sha256_file(path)?;
    // Keep only the hash of a file that did not change while it was read.
    let after = fs::metadata(path).ok().as_ref().and_then(Stamp::of);
    if let Some(stamp) = stamp.filter(|s| after.as_ref() == Some(s)) {
        let _ = write_sidecar(&sidecar, &stamp, &hex);
    }
    Ok(hex)
}

/// What tells that a file changed since its sidecar was written.
#[derive(Debug, PartialEq, Eq)]
struct Stamp {
    size: u64,
    mtime_ns: u128,
}

impl Stamp {
    /// `None` where the file system keeps no modification time: nothing
    /// would then tell a stale sidecar, so none is used.
    fn of(m: &Metadata) -> Option<Stamp> {
        let mtime = m.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
        Some(Stamp {
            size: m.len(),
            mtime_ns: mtime.as_nanos(),
        })
    }

    fn sidecar_text(&self, hex: &str) -> String {
        format!(
            "sha256 {hex}\nsize {}\nmtime_ns {}\n",
            self.size, self.mtime_ns
        )
    }
}

fn sha256_file(path: &Path) -> io::Result<String> {
    let mut hasher = Sha256::new();
    io::copy(&mut File::open(path)?, &mut hasher)?;
    Ok(format!("{:x}", hasher.finalize()))
}

/// The recorded hash, if the sidecar is well formed and records `stamp`.
fn read_sidecar(sidecar: &Path, stamp: &Stamp) -> Option<String> {
    let mut text = String::new();
    File::open(sidecar)
        .ok()?
        .take(SIDECAR_MAX)
        .read_to_string(&mut text)
        .ok()?;
    let hex = text.lines().next()?.strip_prefix("sha256 ")?;
    let is_hex = hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    // Comparing the whole text checks the format and the stamp at once.
    (is_hex && text == stamp.sidecar_text(hex)).then(|| hex.to_owned())
}

/// Writes a unique temporary file beside the sidecar and renames it over
/// the sidecar, so that a reader never sees half a sidecar and two
/// processes hashing the same file do not mix their bytes.
fn write_sidecar(sidecar: &Path, stamp: &Stamp, hex: &str) -> io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let tmp = with_suffix(
        sidecar,
        &format!(
            ".tmp.{}.{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ),
    );
    let written = fs::write(&tmp, stamp.sidecar_text(hex)).and_then(|()| fs::rename(&tmp, sidecar));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    const ABCD: &str = "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589";

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "assay-local-fingerprint-{name}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn stamp(path: &Path) -> Stamp {
        Stamp::of(&fs::metadata(path).unwrap()).unwrap()
    }

    #[test]
    fn the_sidecar_is_written_once_and_then_trusted_while_the_file_is_unchanged() {
        let dir = scratch("trusted");
        let model = dir.join("m.gguf");
        let sidecar = dir.join("m.gguf.sha256");
        fs::write(&model, b"abc").unwrap();

        assert_eq!(sha256_cached(&model).unwrap(), ABC);
        assert_eq!(
            fs::read_to_string(&sidecar).unwrap(),
            stamp(&model).sidecar_text(ABC)
        );

        // A wrong hash under the right size and time is returned as is:
        // proof that the sidecar is read rather than the file hashed again.
        let wrong = "0".repeat(64);
        fs::write(&sidecar, stamp(&model).sidecar_text(&wrong)).unwrap();
        assert_eq!(sha256_cached(&model).unwrap(), wrong);
        assert_eq!(
            file_identity(&model).unwrap(),
            format!("m.gguf@sha256:{wrong}")
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_sidecar_of_another_size_or_time_or_malformed_is_recomputed() {
        let dir = scratch("stale");
        let model = dir.join("m.gguf");
        let sidecar = dir.join("m.gguf.sha256");
        let wrong = "0".repeat(64);

        // Another size: the file grew since the sidecar was written.
        fs::write(&model, b"abc").unwrap();
        fs::write(&sidecar, stamp(&model).sidecar_text(&wrong)).unwrap();
        fs::write(&model, b"abcd").unwrap();
        assert_eq!(sha256_cached(&model).unwrap(), ABCD);
        assert_eq!(
            fs::read_to_string(&sidecar).unwrap(),
            stamp(&model).sidecar_text(ABCD),
            "the stale sidecar is replaced"
        );

        // Same size, another modification time.
        fs::write(&sidecar, stamp(&model).sidecar_text(&wrong)).unwrap();
        let later = SystemTime::now() + Duration::from_secs(60);
        File::options()
            .write(true)
            .open(&model)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(sha256_cached(&model).unwrap(), ABCD);

        // Malformed: not hex, a line too many, empty.
        let good = stamp(&model).sidecar_text(&wrong);
        for bad in [
            good.replace("sha256 0", "sha256 g"),
            format!("{good}extra\n"),
            String::new(),
        ] {
            fs::write(&sidecar, &bad).unwrap();
            assert_eq!(sha256_cached(&model).unwrap(), ABCD, "{bad:?}");
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_sidecar_costs_only_the_caching() {
        let dir = scratch("unwritable");
        let model = dir.join("m.gguf");
        fs::write(&model, b"abc").unwrap();
        // A directory where the sidecar goes can be neither read nor
        // replaced by a rename (and, unlike permissions, stops root too).
        fs::create_dir(dir.join("m.gguf.sha256")).unwrap();
        assert_eq!(sha256_cached(&model).unwrap(), ABC);
        assert_eq!(sha256_cached(&model).unwrap(), ABC);
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "no temporary file is left: {names:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_file_is_an_error_not_a_hash() {
        let dir = scratch("missing");
        assert!(sha256_cached(&dir.join("none.gguf")).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_model_hashes_its_sorted_sha256sum_listing() {
        let dir = scratch("dir").join("embedder");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("b.json"), b"abcd").unwrap();
        fs::write(dir.join("a.json"), b"abc").unwrap();
        fs::write(dir.join("notes.txt"), b"not part of the model").unwrap();
        // `sha256sum a.json b.json | sha256sum` on these two files.
        assert_eq!(
            dir_identity(&dir, &["b.json", "a.json"]).unwrap(),
            "embedder@sha256:d573cab2cebc3fb0db0cf52051f9cb55f928d747398c2d180a57eec2d68bcb66"
        );
        fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn names_are_the_last_component_never_the_path() {
        assert_eq!(file_name(Path::new("/models/x.gguf")), "x.gguf");
        assert_eq!(file_name(Path::new("/models/minilm/")), "minilm");
        let dir = scratch("names");
        fs::create_dir(dir.join("sub")).unwrap();
        let up = file_name(&dir.join("sub").join(".."));
        assert_eq!(up, dir.file_name().unwrap().to_string_lossy());
        fs::remove_dir_all(&dir).unwrap();
    }
}
