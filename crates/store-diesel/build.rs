//! Embeds `migrations/shared`: writes `$OUT_DIR/shared_migrations.rs`, the
//! list of its migrations in version order, each with the text of its
//! `up.sql` and `down.sql` (`crate::migrate::Portable`). The SQL is
//! rendered for each backend when it runs, so it is written once.

use std::error::Error;
use std::fmt::Write as _;
use std::path::Path;

fn main() -> Result<(), Box<dyn Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations/shared");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&root).map_err(|e| format!("{}: {e}", root.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() && !name.starts_with('.') {
            names.push(name);
        }
    }
    names.sort_unstable();
    let mut list = String::from("&[\n");
    for name in &names {
        let dir = root.join(name);
        for file in ["up.sql", "down.sql"] {
            let path = dir.join(file);
            if !path.is_file() {
                return Err(format!("{} is missing", path.display()).into());
            }
            println!("cargo:rerun-if-changed={}", path.display());
        }
        let dir = dir.display();
        writeln!(
            list,
            "    Portable {{ name: {name:?}, up: include_str!(\"{dir}/up.sql\"), \
             down: include_str!(\"{dir}/down.sql\") }},"
        )?;
    }
    list.push(']');
    let out = Path::new(&std::env::var("OUT_DIR")?).join("shared_migrations.rs");
    std::fs::write(&out, list).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(())
}
