//! A real `partner-api serve --demo` process for the tests that need a
//! socket: started on a free port, read until it says where it listens
//! (the rest of its stdout drained, so it never writes to a closed pipe),
//! and killed (SIGKILL: a crash) on drop.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::BIN;

/// How to start `serve --demo --listen 127.0.0.1:0` over one database.
pub struct ServeDemo {
    dir: PathBuf,
    url: String,
    envs: Vec<(String, String)>,
    without_inherited: bool,
    log: Option<PathBuf>,
    listen: String,
    bin: PathBuf,
}

impl ServeDemo {
    /// `serve --demo` in `dir` over `url`, with `PARTNER_API_LOG=warn` and
    /// stderr discarded.
    pub fn new(dir: &Path, url: &str) -> Self {
        Self {
            dir: dir.to_owned(),
            url: url.to_owned(),
            envs: vec![("PARTNER_API_LOG".to_owned(), "warn".to_owned())],
            without_inherited: false,
            log: None,
            listen: "127.0.0.1:0".to_owned(),
            bin: PathBuf::from(BIN),
        }
    }

    /// Runs `bin` instead of the binary Cargo built for the tests.
    pub fn binary(mut self, bin: &Path) -> Self {
        bin.clone_into(&mut self.bin);
        self
    }

    /// Listens on `addr` instead of a port the system picks.
    pub fn listen(mut self, addr: &str) -> Self {
        addr.clone_into(&mut self.listen);
        self
    }

    /// Sets `var` for the process; a later value wins.
    pub fn env(mut self, var: &str, value: &str) -> Self {
        self.envs.push((var.to_owned(), value.to_owned()));
        self
    }

    /// Drops every `PARTNER_API_*` variable the test process inherited.
    pub fn without_inherited_config(mut self) -> Self {
        self.without_inherited = true;
        self
    }

    /// Writes stderr to the file `dir/<name>.log` instead of discarding it.
    pub fn log(mut self, name: &str) -> Self {
        self.log = Some(self.dir.join(format!("{name}.log")));
        self
    }

    /// Starts the process and reads its stdout until it says where it
    /// listens.
    pub fn start(self) -> Served {
        let stderr = match &self.log {
            Some(path) => Stdio::from(
                std::fs::File::create(path)
                    .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display())),
            ),
            None => Stdio::null(),
        };
        let mut cmd = Command::new(&self.bin);
        if self.without_inherited {
            for (var, _) in std::env::vars_os() {
                if var.to_string_lossy().starts_with("PARTNER_API_") {
                    cmd.env_remove(var);
                }
            }
        }
        let mut child = cmd
            .args(["serve", "--demo", "--listen", &self.listen])
            .args(["--database-url", &self.url])
            .current_dir(&self.dir)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.bin.display()));
        let out = child.stdout.take().unwrap();
        let mut lines = std::io::BufReader::new(out).lines();
        let mut stdout = Vec::new();
        let addr = loop {
            let Some(Ok(line)) = lines.next() else {
                let _ = child.kill();
                let _ = child.wait();
                let log = self.log.as_ref().map_or(String::new(), |path| {
                    std::fs::read_to_string(path).unwrap_or_default()
                });
                panic!("serve exited before listening: {stdout:?}\n{log}");
            };
            stdout.push(line.clone());
            if let Some(rest) = line.strip_prefix("Listening on http://") {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
        };
        // Keep reading what it prints after that line: a closed pipe would
        // make its next `println!` panic and take the server down.
        std::thread::spawn(move || lines.for_each(drop));
        Served {
            child,
            addr,
            stdout,
        }
    }
}

/// A running `serve --demo`, killed (SIGKILL) and reaped on drop.
pub struct Served {
    /// The process, for tests that signal or wait on it themselves.
    pub child: Child,
    /// The `host:port` it listens on.
    pub addr: String,
    /// Its stdout up to and including the `Listening on` line.
    pub stdout: Vec<String>,
}

impl Served {
    /// The demo key, printed by the first start on a database.
    pub fn demo_key(&self) -> String {
        self.stdout
            .iter()
            .find_map(|l| l.strip_prefix("Demo test key (shown once): "))
            .unwrap_or_else(|| panic!("no demo key in {:?}", self.stdout))
            .to_owned()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
