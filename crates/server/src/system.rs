//! The production adapters of the domain's non-storage ports — the system
//! clock, the operating system's random source, the AES-256-GCM sealer and
//! its key file — and the opening of the storage ports.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use ring::rand::{SecureRandom, SystemRandom};
use secrecy::ExposeSecret as _;

use domain::ports::{Clock, Entropy, Sealer};
use store_diesel::Stores;
use store_diesel::sealer::AesGcmSealer;

use crate::config::{Settings, describe};

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(since) => i64::try_from(since.as_millis()).unwrap_or(i64::MAX),
            Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
        }
    }
}

/// The operating system's cryptographically secure random source.
///
/// Draws of up to [`POOLED_MAX`] bytes (request ids, ids, tokens) are
/// served from a per-thread pool of [`POOL_BYTES`] bytes read from the OS
/// at once, which saves a system call on every request; each byte is
/// zeroed in the pool as it is handed out, so none is handed out twice.
/// Larger draws go straight to the OS.
#[derive(Debug, Clone)]
pub struct OsEntropy {
    rng: SystemRandom,
}

/// Bytes read from the OS at a time for the per-thread pool.
const POOL_BYTES: usize = 256;
/// The largest draw served from the pool.
const POOLED_MAX: usize = 64;

/// One thread's unread OS randomness: `bytes[next..]`.
struct Pool {
    bytes: [u8; POOL_BYTES],
    next: usize,
}

thread_local! {
    static POOL: std::cell::RefCell<Pool> = const {
        std::cell::RefCell::new(Pool { bytes: [0; POOL_BYTES], next: POOL_BYTES })
    };
}

impl OsEntropy {
    /// The OS random source.
    #[must_use]
    pub fn new() -> Self {
        Self {
            rng: SystemRandom::new(),
        }
    }

    /// Fills `buf` straight from the OS.
    fn fill_direct(&self, buf: &mut [u8]) {
        if self.rng.fill(buf).is_err() {
            panic!("the operating system's random source failed");
        }
    }
}

impl Default for OsEntropy {
    fn default() -> Self {
        Self::new()
    }
}

impl Entropy for OsEntropy {
    /// # Panics
    /// When the operating system's random source fails: ids and API keys
    /// made without randomness would be guessable, so the process stops
    /// rather than mint them.
    fn fill(&self, buf: &mut [u8]) {
        if buf.len() > POOLED_MAX {
            return self.fill_direct(buf);
        }
        POOL.with_borrow_mut(|pool| {
            if POOL_BYTES - pool.next < buf.len() {
                self.fill_direct(&mut pool.bytes);
                pool.next = 0;
            }
            let end = pool.next + buf.len();
            // Always in range (`buf.len() <= POOLED_MAX < POOL_BYTES`); were
            // it not, the draw still comes from the OS, never unfilled.
            match pool.bytes.get_mut(pool.next..end) {
                Some(drawn) => {
                    buf.copy_from_slice(drawn);
                    drawn.fill(0);
                    pool.next = end;
                }
                None => self.fill_direct(buf),
            }
        });
    }
}

/// The sealer of secrets at rest: `secrets.sealing_key` when set, else the
/// key in `secrets.sealing_key_file`, which is created (with its
/// directory, mode 0600, holding a fresh key) when absent.
///
/// # Errors
/// A key file that cannot be read, created or parsed.
pub fn load_sealer(settings: &Settings) -> anyhow::Result<AesGcmSealer> {
    if let Some(key) = &settings.secrets.sealing_key {
        return AesGcmSealer::from_hex(key.expose_secret())
            .context("secrets.sealing_key cannot be used");
    }
    let path = settings.secrets.sealing_key_file.as_path();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create_key_file(path)?,
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot read sealing key file {}", path.display()));
        }
    };
    AesGcmSealer::from_hex(&text)
        .with_context(|| format!("sealing key file {} cannot be used", path.display()))
}

/// Writes a fresh key to `path` without ever exposing a partly written
/// file: the key goes to a private temporary file that is then linked into
/// place. When another process won the race, its key is read instead.
fn create_key_file(path: &Path) -> anyhow::Result<String> {
    let what = || format!("cannot create sealing key file {}", path.display());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(what)?;
    }
    let key = AesGcmSealer::generate_hex().with_context(what)?;
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = Path::new(&tmp_name);
    let written = write_private(tmp, &key).and_then(|()| std::fs::hard_link(tmp, path));
    let _ = std::fs::remove_file(tmp);
    match written {
        Ok(()) => Ok(key),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read sealing key file {}", path.display())),
        Err(e) => Err(e).with_context(what),
    }
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()
}

/// The ports every service shares.
#[derive(Clone)]
pub struct Ports {
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Randomness for ids and secrets.
    pub entropy: Arc<dyn Entropy>,
    /// Sealing of secrets at rest.
    pub sealer: Arc<dyn Sealer>,
}

impl Ports {
    /// The production ports: [`SystemClock`], [`OsEntropy`] and the sealer
    /// of [`load_sealer`].
    ///
    /// # Errors
    /// As [`load_sealer`].
    pub fn load(settings: &Settings) -> anyhow::Result<Self> {
        Ok(Self {
            clock: Arc::new(SystemClock),
            entropy: Arc::new(OsEntropy::new()),
            sealer: Arc::new(load_sealer(settings)?),
        })
    }
}

/// The storage ports over the configured database, with at most
/// `max_connections` pooled connections. Does not migrate and does not
/// connect yet (connections open on first use, on the calling runtime).
///
/// # Errors
/// When the pool cannot be built.
pub fn open_stores(settings: &Settings, max_connections: usize) -> anyhow::Result<Stores> {
    Stores::open(&settings.database, max_connections)
        .with_context(|| format!("cannot open {}", describe(&settings.database)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Overrides;

    fn settings(dir: &Path, env: &[(&str, &str)]) -> Settings {
        let mut vars = vec![(
            "PARTNER_API_SECRETS__SEALING_KEY_FILE".to_owned(),
            dir.join("keys/sealing.key").display().to_string(),
        )];
        vars.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        Settings::load(None, vars, &Overrides::default()).unwrap()
    }

    #[test]
    fn pooled_randomness_is_never_handed_out_twice() {
        let entropy = OsEntropy::new();
        let mut seen = std::collections::HashSet::new();
        // Several refills of the pool, in draws of every pooled size.
        for len in (1..=POOLED_MAX).cycle().take(200) {
            let mut buf = vec![0_u8; len];
            entropy.fill(&mut buf);
            if len >= 16 {
                assert!(seen.insert(buf), "a {len}-byte draw repeated");
            }
        }
        POOL.with_borrow(|pool| {
            assert!(pool.bytes.iter().take(pool.next).all(|b| *b == 0));
        });
        let mut large = [0_u8; POOLED_MAX + 1];
        entropy.fill(&mut large);
        assert!(large.iter().any(|b| *b != 0));
    }

    #[test]
    fn the_clock_reads_unix_milliseconds() {
        let now = SystemClock.now_ms();
        assert!(now > 1_767_225_600_000, "{now}"); // after 2026-01-01
    }

    #[test]
    fn entropy_fills_the_buffer() {
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        OsEntropy::new().fill(&mut a);
        OsEntropy::new().fill(&mut b);
        assert_ne!(a, b);
    }

    #[test]
    fn the_key_file_is_created_private_once_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path(), &[]);
        let first = load_sealer(&s).unwrap();
        let path = dir.path().join("keys/sealing.key");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.trim().len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let sealed = first.seal(b"psk_test_x", b"ctx");
        let second = load_sealer(&s).unwrap();
        assert_eq!(second.open(&sealed, b"ctx").unwrap(), b"psk_test_x");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        let leftovers = std::fs::read_dir(dir.path().join("keys")).unwrap().count();
        assert_eq!(leftovers, 1);
    }

    #[test]
    fn a_configured_key_takes_precedence_over_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let key = "ab".repeat(32);
        let s = settings(dir.path(), &[("PARTNER_API_SECRETS__SEALING_KEY", &key)]);
        let sealer = load_sealer(&s).unwrap();
        assert!(!dir.path().join("keys").exists());
        let sealed = sealer.seal(b"x", b"c");
        let same = AesGcmSealer::from_hex(&key).unwrap();
        assert_eq!(same.open(&sealed, b"c").unwrap(), b"x");
    }

    #[test]
    fn a_corrupt_key_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("keys")).unwrap();
        std::fs::write(dir.path().join("keys/sealing.key"), "nope").unwrap();
        let s = settings(dir.path(), &[]);
        let e = load_sealer(&s).unwrap_err().to_string();
        assert!(
            e.starts_with("sealing key file ") && e.ends_with(" cannot be used"),
            "{e}"
        );
    }
}
