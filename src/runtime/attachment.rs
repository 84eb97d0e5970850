//! What a person's message carries besides its text: images (pasted,
//! dropped or picked in the composer, or sent through the API) and the
//! elements they selected in the preview. The rules on images are here so
//! the composer refuses what the server would refuse, with the same words.

use serde::{Deserialize, Serialize};

use super::project::ProjectId;
use super::selection::ElementSelection;

/// The largest image a message may carry, in bytes.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;
/// The most images one message may carry.
pub const MAX_IMAGES: usize = 4;

/// An image kept with a message: its bytes are a file named after their
/// SHA-256 in the project's image folder on the server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRef {
    /// Lower-case hex SHA-256 of the bytes.
    pub sha256: String,
    /// `image/png`, `image/jpeg`, `image/webp` or `image/gif`.
    pub media_type: String,
}

impl ImageRef {
    /// Where the IDE (and a program, with its token) reads the image.
    pub fn url(&self, project: &ProjectId) -> String {
        format!(
            "/api/v1/projects/{}/images/{}",
            project.as_str(),
            self.sha256
        )
    }

    /// Whether `sha256` is one this server could have named (so it is safe
    /// as a file name).
    pub fn valid_hash(sha256: &str) -> bool {
        sha256.len() == 64
            && sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    }
}

/// What a message carries besides its text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Attachments {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selections: Vec<ElementSelection>,
}

impl Attachments {
    pub fn is_empty(&self) -> bool {
        self.images.is_empty() && self.selections.is_empty()
    }
}

/// What a person's message shows of what it carried: its images, and each
/// selected element's label (the element itself reached the model in the
/// question's text). Small, so the first load decodes it cheaply.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Carried {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selections: Vec<String>,
}

impl Carried {
    pub fn is_empty(&self) -> bool {
        self.images.is_empty() && self.selections.is_empty()
    }
}

impl From<&Attachments> for Carried {
    fn from(attachments: &Attachments) -> Carried {
        Carried {
            images: attachments.images.clone(),
            selections: attachments
                .selections
                .iter()
                .map(ElementSelection::label)
                .collect(),
        }
    }
}

/// Why an image is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("an image may be at most 5 MB; this one is {} KB", .0 / 1024)]
    TooLarge(usize),
    #[error("images must be PNG, JPEG, WebP or GIF")]
    UnknownType,
    #[error("the image's bytes are not a {0} image")]
    NotThatType(String),
    #[error("a message may carry at most {MAX_IMAGES} images")]
    TooMany,
}

/// The image types a message may carry, by their magic bytes.
pub const MEDIA_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/// The image type `bytes` begin like, when it is one of [`MEDIA_TYPES`].
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// The image's type, when `declared` (as a browser or program names it;
/// `image/jpg` is taken for JPEG) is one a message may carry, the bytes are
/// of that type and not too many.
pub fn check_image(declared: &str, bytes: &[u8]) -> Result<&'static str, ImageError> {
    let declared = declared
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let declared = if declared == "image/jpg" {
        "image/jpeg".to_owned()
    } else {
        declared
    };
    let Some(known) = MEDIA_TYPES.iter().find(|t| **t == declared) else {
        return Err(ImageError::UnknownType);
    };
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(ImageError::TooLarge(bytes.len()));
    }
    if sniff(bytes) != Some(known) {
        return Err(ImageError::NotThatType(declared));
    }
    Ok(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn an_image_is_taken_by_its_declared_type_when_its_bytes_agree() {
        assert_eq!(check_image("image/png", PNG), Ok("image/png"));
        assert_eq!(
            check_image("IMAGE/JPG", b"\xFF\xD8\xFF\xE0"),
            Ok("image/jpeg")
        );
        assert_eq!(check_image("image/gif", b"GIF89a.."), Ok("image/gif"));
        assert_eq!(
            check_image("image/webp", b"RIFF\0\0\0\0WEBPVP8 "),
            Ok("image/webp")
        );
    }

    #[test]
    fn an_image_of_another_type_or_with_other_bytes_is_refused() {
        assert_eq!(
            check_image("image/svg+xml", b"<svg/>"),
            Err(ImageError::UnknownType)
        );
        assert_eq!(
            check_image("image/png", b"GIF89a"),
            Err(ImageError::NotThatType("image/png".into()))
        );
        assert_eq!(
            check_image("image/png", b"<html>"),
            Err(ImageError::NotThatType("image/png".into()))
        );
    }

    #[test]
    fn an_image_over_5_mb_is_refused() {
        let mut big = PNG.to_vec();
        big.resize(MAX_IMAGE_BYTES + 1, 0);
        assert_eq!(
            check_image("image/png", &big),
            Err(ImageError::TooLarge(MAX_IMAGE_BYTES + 1))
        );
        big.truncate(MAX_IMAGE_BYTES);
        assert!(check_image("image/png", &big).is_ok());
    }

    #[test]
    fn only_a_hex_sha256_names_an_image() {
        assert!(ImageRef::valid_hash(&"a1".repeat(32)));
        assert!(!ImageRef::valid_hash(&"A1".repeat(32)));
        assert!(!ImageRef::valid_hash("../../etc/passwd"));
        assert!(!ImageRef::valid_hash(&"a".repeat(63)));
    }
}
