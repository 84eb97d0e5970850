//! A file's bytes in the JSON the browser and the server exchange: text
//! travels as text, anything else as base64, so every file arrives
//! byte-exact.
//!
//! It is two fields of the object it is flattened into: `content`, and
//! `encoding`, which is `"base64"` for bytes that are not UTF-8 and absent
//! (or `"utf8"`) for text, so `{"content": "hi"}` is still read as text.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};

/// The bytes of a file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(try_from = "Wire")]
pub struct FileContent(Vec<u8>);

impl FileContent {
    pub fn new(bytes: impl Into<Vec<u8>>) -> FileContent {
        FileContent(bytes.into())
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

impl From<&str> for FileContent {
    fn from(text: &str) -> FileContent {
        FileContent::new(text)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Encoding {
    #[default]
    Utf8,
    Base64,
}

#[derive(Deserialize)]
struct Wire {
    content: String,
    #[serde(default)]
    encoding: Encoding,
}

#[derive(Debug, thiserror::Error)]
#[error("the file's content is not valid base64: {0}")]
pub struct InvalidBase64(#[from] base64::DecodeError);

impl TryFrom<Wire> for FileContent {
    type Error = InvalidBase64;

    fn try_from(wire: Wire) -> Result<FileContent, InvalidBase64> {
        Ok(FileContent(match wire.encoding {
            Encoding::Utf8 => wire.content.into_bytes(),
            Encoding::Base64 => STANDARD.decode(wire.content)?,
        }))
    }
}

impl Serialize for FileContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(text) => {
                let mut fields = serializer.serialize_struct("FileContent", 1)?;
                fields.serialize_field("content", text)?;
                fields.end()
            }
            Err(_) => {
                let mut fields = serializer.serialize_struct("FileContent", 2)?;
                fields.serialize_field("content", &STANDARD.encode(&self.0))?;
                fields.serialize_field("encoding", &Encoding::Base64)?;
                fields.end()
            }
        }
    }
}
