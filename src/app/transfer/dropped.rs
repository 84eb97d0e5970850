//! What was dropped on the import panel: one zip or JSON file, or files and
//! folders walked with the browser's entries API into paths.

use js_sys::{Array, Function, Promise};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DataTransfer, File, FileSystemDirectoryEntry, FileSystemDirectoryReader, FileSystemEntry,
    FileSystemFileEntry,
};

pub enum Dropped {
    Archive(File),
    Files(Vec<(String, File)>),
}

fn js(error: JsValue) -> String {
    error.as_string().unwrap_or_else(|| format!("{error:?}"))
}

/// The dropped entries; only readable while the drop event is handled.
pub fn entries(transfer: &DataTransfer) -> Vec<FileSystemEntry> {
    let items = transfer.items();
    (0..items.length())
        .filter_map(|i| items.get(i))
        .filter_map(|item| item.webkit_get_as_entry().ok().flatten())
        .collect()
}

async fn file_of(entry: &FileSystemFileEntry) -> Result<File, String> {
    let promise = Promise::new(&mut |resolve: Function, reject: Function| {
        entry.file_with_callback_and_callback(&resolve, &reject);
    });
    JsFuture::from(promise)
        .await
        .map_err(js)?
        .dyn_into::<File>()
        .map_err(js)
}

async fn children(reader: &FileSystemDirectoryReader) -> Result<Vec<FileSystemEntry>, String> {
    let mut all = Vec::new();
    loop {
        let mut failed = None;
        let promise = Promise::new(&mut |resolve: Function, reject: Function| {
            failed = reader
                .read_entries_with_callback_and_callback(&resolve, &reject)
                .err();
        });
        if let Some(error) = failed {
            return Err(js(error));
        }
        let batch: Array = JsFuture::from(promise).await.map_err(js)?.unchecked_into();
        if batch.length() == 0 {
            return Ok(all);
        }
        all.extend(batch.iter().map(JsCast::unchecked_into::<FileSystemEntry>));
    }
}

/// One dropped zip or JSON file stays an archive; anything else becomes
/// files by path (a single dropped folder's own name left out).
pub async fn walk(entries: Vec<FileSystemEntry>) -> Result<Dropped, String> {
    if let [only] = entries.as_slice() {
        let name = only.name().to_lowercase();
        if only.is_file() && (name.ends_with(".zip") || name.ends_with(".json")) {
            let file = file_of(only.unchecked_ref()).await?;
            return Ok(Dropped::Archive(file));
        }
    }
    let strip_top = entries.len() == 1 && entries[0].is_directory();
    let mut pending: Vec<(String, FileSystemEntry)> = entries
        .into_iter()
        .map(|entry| {
            let path = if strip_top {
                String::new()
            } else {
                entry.name()
            };
            (path, entry)
        })
        .collect();
    let mut files = Vec::new();
    while let Some((path, entry)) = pending.pop() {
        if entry.is_directory() {
            if !path.is_empty() && crate::runtime::tree::is_skipped_path(&path) {
                continue;
            }
            let directory: &FileSystemDirectoryEntry = entry.unchecked_ref();
            for child in children(&directory.create_reader()).await? {
                let child_path = if path.is_empty() {
                    child.name()
                } else {
                    format!("{path}/{}", child.name())
                };
                pending.push((child_path, child));
            }
        } else if entry.is_file() {
            files.push((path, file_of(entry.unchecked_ref()).await?));
        }
    }
    Ok(Dropped::Files(files))
}
