//! `export.zip` without holding the project in memory: the zip is written
//! entry by entry (each file copied in [`COPY_BUFFER`] pieces) into a
//! temporary file under `<data_dir>/exports/`, which the response then
//! streams. The file is unlinked as soon as it is opened, so it goes away
//! with its last descriptor, and a crash in between leaves at most a name
//! that the next export removes.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Seek, SeekFrom};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use super::TransferError;
use super::archive::{COPY_BUFFER, ZipOut};
use super::walk::{WalkLimits, walk};

pub(super) fn io_error(path: &Path) -> impl FnOnce(io::Error) -> TransferError + '_ {
    move |source| TransferError::Io {
        path: path.to_owned(),
        source,
    }
}

/// A new, already unlinked, file in `dir` (made private if missing).
pub fn temp_file(dir: &Path) -> Result<File, TransferError> {
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io_error(dir))?;
    remove_leftovers(dir);
    let path = dir.join(format!("export-{:016x}.zip", rand::random::<u64>()));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(io_error(&path))?;
    std::fs::remove_file(&path).map_err(io_error(&path))?;
    Ok(file)
}

/// Removes the names left in `dir` by a crash between an export's create
/// and unlink. Removing the name of an export being made this instant is
/// harmless: it has its descriptor, and it ignores the name being gone.
fn remove_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if let Err(error) = std::fs::remove_file(entry.path())
            && error.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!(path = %entry.path().display(), %error, "a leftover export could not be removed");
        }
    }
}

/// A file made for the export beside the project's own (the database's
/// dump): its name in the zip, the file (rewound) and its length.
pub struct Extra {
    pub name: &'static str,
    pub file: File,
    pub len: u64,
}

/// Writes the zip of the project at `workspace` (and `extra` first) into
/// `out` and rewinds it; returns it and its length.
pub fn write_zip(
    workspace: &Path,
    limits: WalkLimits,
    out: File,
    extra: Option<Extra>,
) -> Result<(File, u64), TransferError> {
    let mut zip = ZipOut::new(BufWriter::with_capacity(COPY_BUFFER, out));
    if let Some(mut extra) = extra {
        zip.add(extra.name, &mut extra.file, extra.len)?;
    }
    walk(workspace, limits, &mut |mut found| {
        zip.add(found.path, &mut found.file, found.size)
    })?;
    let mut out = zip
        .finish()?
        .into_inner()
        .map_err(|e| io_error(workspace)(e.into_error()))?;
    let len = out.seek(SeekFrom::End(0)).map_err(io_error(workspace))?;
    out.seek(SeekFrom::Start(0)).map_err(io_error(workspace))?;
    Ok((out, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Cursor, Read};
    use std::time::Duration;

    fn write(root: &Path, path: &str, bytes: &[u8]) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    /// The entries of the export of `workspace`: names and bytes, in the
    /// zip's order.
    fn export(workspace: &Path) -> Vec<(String, Vec<u8>)> {
        let exports = tempfile::tempdir().unwrap();
        let out = temp_file(exports.path()).unwrap();
        let (mut file, len) = write_zip(workspace, WalkLimits::default(), out, None).unwrap();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).unwrap();
        assert_eq!(bytes.len() as u64, len);
        unzip(&bytes)
    }

    fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
        let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
        (0..archive.len())
            .map(|index| {
                let mut file = archive.by_index(index).unwrap();
                let mut body = Vec::new();
                file.read_to_end(&mut body).unwrap();
                (file.name().to_owned(), body)
            })
            .collect()
    }

    /// `f`'s result, failing the test if it blocks for a minute.
    fn returns<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(Duration::from_secs(60))
            .expect("the export blocked")
    }

    #[test]
    fn an_export_holds_the_project_files_in_path_order() {
        let root = tempfile::tempdir().unwrap();
        write(root.path(), "src/deep/data.bin", &[0, 159, 146, 150, 255]);
        write(root.path(), "index.html", b"<h1>hi</h1>\n");
        write(root.path(), "node_modules/react/index.js", b"skipped");
        write(root.path(), "empty", b"");
        assert_eq!(
            export(root.path()),
            [
                ("empty".to_owned(), Vec::new()),
                ("index.html".to_owned(), b"<h1>hi</h1>\n".to_vec()),
                ("src/deep/data.bin".to_owned(), vec![0, 159, 146, 150, 255]),
            ]
        );
    }

    #[test]
    fn a_file_larger_than_the_copy_buffer_is_exported_byte_identical() {
        let root = tempfile::tempdir().unwrap();
        // Bytes that do not repeat with the buffer's period.
        let mut seed = 0x9e37_79b9_u32;
        let big: Vec<u8> = (0..3 * COPY_BUFFER + 17)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                seed.to_le_bytes()[0]
            })
            .collect();
        write(root.path(), "assets/big.bin", &big);
        let files = export(root.path());
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, "assets/big.bin");
        assert!(files[0].1 == big, "the entry differs from the file");
    }

    #[test]
    fn a_symlink_in_a_project_is_not_followed_by_export() {
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "secret/token", b"secret");
        let root = tempfile::tempdir().unwrap();
        write(root.path(), "src/App.jsx", b"app");
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(outside.path().join(target), root.path().join(name))
                .unwrap();
        };
        link("secret/token", "token");
        link("secret", "src/secret-dir");
        std::os::unix::fs::symlink("/etc/passwd", root.path().join("passwd")).unwrap();
        let files = export(root.path());
        assert_eq!(files, [("src/App.jsx".to_owned(), b"app".to_vec())]);
    }

    #[test]
    fn a_fifo_in_a_project_does_not_block_export() {
        let root = tempfile::tempdir().unwrap();
        write(root.path(), "a.txt", b"a");
        let fifo = root.path().join("b.txt");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        write(root.path(), "c.txt", b"c");
        let path = root.path().to_owned();
        let files = returns(move || export(&path));
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a.txt", "c.txt"]);
    }

    #[test]
    fn an_export_leaves_no_file_behind_and_clears_a_crashs_leftovers() {
        let exports = tempfile::tempdir().unwrap();
        let leftover = exports.path().join("export-0000000000000001.zip");
        std::fs::write(&leftover, b"half an export").unwrap();
        let root = tempfile::tempdir().unwrap();
        write(root.path(), "a.txt", b"a");
        let out = temp_file(exports.path()).unwrap();
        let (_file, len) = write_zip(root.path(), WalkLimits::default(), out, None).unwrap();
        assert!(len > 0);
        let left: Vec<_> = std::fs::read_dir(exports.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
