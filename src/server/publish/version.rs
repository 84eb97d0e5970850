//! Writing one published version: its files go into a temporary folder
//! beside the others (each synced, text ones with a gzip copy beside them
//! so they are served compressed), which becomes `v<N>` in one rename when
//! every file is in. A failed or abandoned version leaves nothing behind.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::PublishError;
use crate::runtime::host::checked_path;

/// The files worth a gzip copy, by extension.
const COMPRESSIBLE: &[&str] = &[
    "html",
    "htm",
    "css",
    "js",
    "mjs",
    "cjs",
    "json",
    "map",
    "svg",
    "txt",
    "xml",
    "wasm",
    "md",
    "webmanifest",
];
/// Smaller files are sent as they are.
const COMPRESS_FROM: usize = 512;

/// How large a version may be.
#[derive(Debug, Clone, Copy)]
pub struct WriteLimits {
    pub max_bytes: u64,
    pub max_files: u64,
}

/// A version being written.
pub struct VersionWriter {
    tmp: PathBuf,
    target: PathBuf,
    limits: WriteLimits,
    files: u64,
    bytes: u64,
    finished: bool,
}

impl VersionWriter {
    pub(super) fn start(
        site_dir: PathBuf,
        version: u32,
        limits: WriteLimits,
    ) -> Result<VersionWriter, PublishError> {
        let tmp = site_dir.join(format!(".writing-v{version}"));
        let target = site_dir.join(format!("v{version}"));
        // A version left half-written by a crash is started again.
        match std::fs::remove_dir_all(&tmp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
        std::fs::create_dir_all(&tmp)?;
        Ok(VersionWriter {
            tmp,
            target,
            limits,
            files: 0,
            bytes: 0,
            finished: false,
        })
    }

    /// Adds the file at `path` (relative to the site's root).
    pub fn add(&mut self, path: &str, content: &[u8]) -> Result<(), PublishError> {
        let checked = checked_path(path)
            .map_err(|e| PublishError::NothingToPublish(format!("{path}: {e}")))?;
        self.files += 1;
        self.bytes += content.len() as u64;
        if self.files > self.limits.max_files || self.bytes > self.limits.max_bytes {
            return Err(PublishError::TooLarge(format!(
                "more than {} files or {} MiB (publish.max_mb)",
                self.limits.max_files,
                self.limits.max_bytes >> 20
            )));
        }
        let full = self.tmp.join(checked.as_str());
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        write_synced(&full, content)?;
        if compressible(checked.as_str()) && content.len() >= COMPRESS_FROM {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            encoder.write_all(content)?;
            let mut gz = full.into_os_string();
            gz.push(".gz");
            write_synced(Path::new(&gz), &encoder.finish()?)?;
        }
        Ok(())
    }

    /// Makes the version whole: its folder appears under its final name.
    /// Returns its file count and size.
    pub fn finish(mut self) -> Result<(u64, u64), PublishError> {
        std::fs::rename(&self.tmp, &self.target)?;
        if let Some(parent) = self.target.parent() {
            std::fs::File::open(parent)?.sync_all()?;
        }
        self.finished = true;
        Ok((self.files, self.bytes))
    }
}

impl Drop for VersionWriter {
    fn drop(&mut self) {
        if !self.finished {
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

fn compressible(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| COMPRESSIBLE.contains(&ext.to_ascii_lowercase().as_str()))
}

fn write_synced(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::File::create(path)?;
    file.write_all(content)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: WriteLimits = WriteLimits {
        max_bytes: 1 << 20,
        max_files: 10,
    };

    #[test]
    fn a_version_appears_whole_with_gzip_copies_of_its_text_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = VersionWriter::start(dir.path().to_owned(), 1, LIMITS).unwrap();
        let page = "<p>hello</p>\n".repeat(100);
        writer.add("index.html", page.as_bytes()).unwrap();
        writer
            .add("assets/logo.png", &[0x89, b'P', b'N', b'G'])
            .unwrap();
        assert!(!dir.path().join("v1").exists());
        assert_eq!(writer.finish().unwrap(), (2, page.len() as u64 + 4));
        let v1 = dir.path().join("v1");
        assert_eq!(
            std::fs::read_to_string(v1.join("index.html")).unwrap(),
            page
        );
        let gz = std::fs::read(v1.join("index.html.gz")).unwrap();
        let mut unzipped = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut unzipped)
            .unwrap();
        assert_eq!(unzipped, page);
        assert!(!v1.join("assets/logo.png.gz").exists());
        assert!(!dir.path().join(".writing-v1").exists());
    }

    #[test]
    fn a_site_past_its_limit_or_an_escaping_path_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = VersionWriter::start(dir.path().to_owned(), 2, LIMITS).unwrap();
        assert!(matches!(
            writer.add("../outside.html", b"x"),
            Err(PublishError::NothingToPublish(_))
        ));
        let big = vec![b'x'; (1 << 20) + 1];
        assert!(matches!(
            writer.add("big.bin", &big),
            Err(PublishError::TooLarge(_))
        ));
        drop(writer);
        assert!(!dir.path().join("outside.html").exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
