//! Zip archives: a project's files written into one entry by entry, each
//! copied in [`COPY_BUFFER`] pieces, and one read into a [`Staging`] entry
//! by entry, refusing links, unsafe paths and anything over the limits as
//! it goes.

use std::io::{self, Cursor, Read, Seek, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::TransferError;
use super::staging::Staging;

/// The most of a file held in memory while it is written into a zip.
pub const COPY_BUFFER: usize = 64 * 1024;

fn archive_error(error: zip::result::ZipError) -> TransferError {
    TransferError::Archive(error.to_string())
}

/// A failure to write a zip: the disk's (storage) or the zip's own.
fn write_error(path: &str, error: zip::result::ZipError) -> TransferError {
    match error {
        zip::result::ZipError::Io(source) => io_error(path, source),
        other => archive_error(other),
    }
}

fn io_error(path: &str, source: io::Error) -> TransferError {
    TransferError::Io {
        path: path.into(),
        source,
    }
}

/// A zip being written into `W`, one entry after another.
pub struct ZipOut<W: Write + Seek> {
    writer: ZipWriter<W>,
    buf: Vec<u8>,
}

impl<W: Write + Seek> ZipOut<W> {
    pub fn new(out: W) -> ZipOut<W> {
        ZipOut {
            writer: ZipWriter::new(out),
            buf: vec![0; COPY_BUFFER],
        }
    }

    /// Adds the entry `path` with the first `size` bytes of `reader` (fewer
    /// if it ends sooner).
    pub fn add(
        &mut self,
        path: &str,
        reader: &mut dyn Read,
        size: u64,
    ) -> Result<(), TransferError> {
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Deflated)
            .unix_permissions(0o644)
            .large_file(size > u64::from(u32::MAX));
        self.writer
            .start_file(path, options)
            .map_err(|e| write_error(path, e))?;
        let mut reader = reader.take(size);
        loop {
            let n = match reader.read(&mut self.buf) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_error(path, e)),
            };
            self.writer
                .write_all(&self.buf[..n])
                .map_err(|e| io_error(path, e))?;
        }
    }

    /// Writes the zip's directory and hands back `W`.
    pub fn finish(self) -> Result<W, TransferError> {
        self.writer.finish().map_err(|e| write_error("", e))
    }
}

/// Writes every entry of the zip `bytes` into `staging`.
pub fn extract(bytes: &[u8], staging: &mut Staging) -> Result<(), TransferError> {
    let mut archive = ZipArchive::new(Cursor::new(bytes)).map_err(archive_error)?;
    for index in 0..archive.len() {
        let mut file = archive.by_index(index).map_err(archive_error)?;
        let name = file.name().to_owned();
        if file.is_symlink() {
            return Err(TransferError::Symlink { entry: name });
        }
        if file.is_dir() {
            staging.add_dir(&name)?;
            continue;
        }
        let executable = file.unix_mode().is_some_and(|mode| mode & 0o100 != 0);
        staging.add_file(&name, &mut file, executable)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::staging::Limits;
    use super::*;

    fn limits() -> Limits {
        Limits {
            max_entries: 10,
            max_entry_bytes: 1000,
            max_total_bytes: 1500,
        }
    }

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut zip = ZipOut::new(Cursor::new(Vec::new()));
        for (path, bytes) in entries {
            zip.add(path, &mut &bytes[..], bytes.len() as u64).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn a_built_zip_extracts_to_the_same_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut staging = Staging::new(dir.path(), limits()).unwrap();
        let zip = zip_of(&[("src/a.js", b"a"), ("b.bin", &[0, 255, 1])]);
        extract(&zip, &mut staging).unwrap();
        assert_eq!(
            std::fs::read(staging.path().join("src/a.js")).unwrap(),
            b"a"
        );
        assert_eq!(
            std::fs::read(staging.path().join("b.bin")).unwrap(),
            [0, 255, 1]
        );
    }

    #[test]
    fn a_highly_compressed_entry_is_stopped_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let mut staging = Staging::new(dir.path(), limits()).unwrap();
        // 1 MB of zeros compresses to about a kilobyte.
        let zip = zip_of(&[("zeros", &vec![0u8; 1_000_000])]);
        assert!(zip.len() < 10_000);
        let err = extract(&zip, &mut staging).unwrap_err();
        assert!(
            matches!(&err, TransferError::EntryTooLarge { entry, .. } if entry == "zeros"),
            "{err:?}"
        );
    }

    #[test]
    fn symlink_entries_are_refused() {
        let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
        writer
            .add_symlink("link", "/etc/passwd", SimpleFileOptions::default())
            .unwrap();
        let zip = writer.finish().unwrap().into_inner();
        let dir = tempfile::tempdir().unwrap();
        let mut staging = Staging::new(dir.path(), limits()).unwrap();
        let err = extract(&zip, &mut staging).unwrap_err();
        assert!(
            matches!(&err, TransferError::Symlink { entry } if entry == "link"),
            "{err:?}"
        );
    }

    #[test]
    fn bytes_that_are_not_a_zip_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut staging = Staging::new(dir.path(), limits()).unwrap();
        let err = extract(b"not a zip", &mut staging).unwrap_err();
        assert!(matches!(err, TransferError::Archive(_)), "{err:?}");
    }
}
