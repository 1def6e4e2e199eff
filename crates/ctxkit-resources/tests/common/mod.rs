//! Shared helpers: temp homes and projects, file writers.

use std::path::{Path, PathBuf};

pub mod packages;

use ctxkit_settings::Environment;

/// A temp world: `<root>/home` (with `.ctxkit` as agent dir) and `<root>/work/proj` as cwd.
pub struct World {
    pub _temp: tempfile::TempDir,
    pub root: PathBuf,
    pub env: Environment,
}

impl World {
    pub fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(temp.path()).unwrap();
        let home = root.join("home");
        let cwd = root.join("work/proj");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        let env = Environment::new(&home, &cwd).with_temp_dir(root.join("tmp"));
        Self {
            _temp: temp,
            root,
            env,
        }
    }

    pub fn agent(&self) -> PathBuf {
        self.env.agent_dir()
    }

    pub fn cwd(&self) -> PathBuf {
        self.env.cwd.clone()
    }

    pub fn project(&self) -> PathBuf {
        self.env.project_dir()
    }
}

pub fn write(path: impl AsRef<Path>, contents: &str) {
    let path = path.as_ref();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

pub fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path).unwrap()
}

pub fn json_file(path: impl AsRef<Path>) -> serde_json::Value {
    serde_json::from_str(&read(path)).unwrap()
}
