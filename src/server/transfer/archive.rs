//! Zip archives: a project's files written into one, and one read into a
//! [`Staging`] entry by entry, refusing links, unsafe paths and anything
//! over the limits as it goes.

use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::TransferError;
use super::staging::Staging;

fn archive_error(error: zip::result::ZipError) -> TransferError {
    TransferError::Archive(error.to_string())
}

/// A zip of `files` (project-relative paths and their bytes), in order.
pub fn build(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, TransferError> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .unix_permissions(0o644)
        .large_file(false);
    for (path, bytes) in files {
        let options = if bytes.len() > u32::MAX as usize {
            options.large_file(true)
        } else {
            options
        };
        writer.start_file(path, options).map_err(archive_error)?;
        writer
            .write_all(bytes)
            .map_err(|e| TransferError::Archive(e.to_string()))?;
    }
    Ok(writer.finish().map_err(archive_error)?.into_inner())
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
        let files: Vec<(String, Vec<u8>)> = entries
            .iter()
            .map(|(p, b)| ((*p).to_owned(), b.to_vec()))
            .collect();
        build(&files).unwrap()
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
