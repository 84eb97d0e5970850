//! The settings panel's saved values: `<data_dir>/settings.json`, written
//! atomically and readable only by the server's user, since it holds keys.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::provider;
use super::secret::{InvalidKey, Secret};
use crate::runtime::llm::{ActionFormat, KeyUpdate, LlmSettingsUpdate};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StoredSettings {
    #[serde(default)]
    pub llm: StoredLlm,
    /// Sections other parts of the IDE keep in the same file, preserved as is.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StoredLlm {
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub base_url: String,
    #[serde(default)]
    pub model: String,
    /// One key per provider id, so switching providers never sends one
    /// provider's key to another.
    #[serde(default)]
    pub api_keys: BTreeMap<String, String>,
    /// The base URL each key was saved with (empty: the provider's preset
    /// URL). A key is sent only there or to its provider's preset URL (see
    /// `settings::key_may_go_to`); changing the base URL later does not
    /// take the key along.
    #[serde(default)]
    pub key_urls: BTreeMap<String, String>,
    /// The answer format chosen per provider, then per model (an empty
    /// model name: the provider's first listed model).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub formats: BTreeMap<String, BTreeMap<String, ActionFormat>>,
}

impl StoredLlm {
    /// The answer format chosen for `model` of `provider`, if any (else the
    /// one chosen with no model named, which is what the provider's first
    /// model was saved under).
    pub fn format_for(&self, provider: &str, model: &str) -> Option<ActionFormat> {
        let models = self.formats.get(provider)?;
        models.get(model).or_else(|| models.get("")).copied()
    }

    fn set_format(&mut self, provider: &str, model: &str, format: Option<ActionFormat>) {
        let models = self.formats.entry(provider.to_owned()).or_default();
        match format {
            Some(format) => {
                models.insert(model.to_owned(), format);
            }
            None => {
                models.remove(model);
            }
        }
        if models.is_empty() {
            self.formats.remove(provider);
        }
    }

    /// The base URL the key for `id` was saved with. A key saved before
    /// URLs were recorded counts as saved with the base URL on file if it
    /// is the key of the provider on file (what it was used with until
    /// then), else with its preset URL; the next save records that for good.
    pub fn key_url(&self, id: &str) -> String {
        if let Some(url) = self.key_urls.get(id) {
            return url.clone();
        }
        let slot = key_slot(&self.provider);
        if slot == id {
            self.base_url.clone()
        } else {
            String::new()
        }
    }
}

/// Where the panel keeps the key of `provider_id`: no provider means a
/// custom URL.
fn key_slot(provider_id: &str) -> &str {
    if provider_id.is_empty() {
        provider::CUSTOM
    } else {
        provider_id
    }
}

impl fmt::Debug for StoredLlm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredLlm")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_keys_for", &self.api_keys.keys().collect::<Vec<_>>())
            .field("formats", &self.formats)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsFileError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid settings JSON: {source}")]
    Syntax {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("unknown provider {0:?}")]
    UnknownProvider(String),
    #[error("{0}")]
    InvalidKey(#[from] InvalidKey),
}

/// Reads and writes `settings.json`; one writer at a time.
#[derive(Debug)]
pub struct SettingsFile {
    path: PathBuf,
    write_lock: Mutex<()>,
}

impl SettingsFile {
    pub const FILE_NAME: &'static str = "settings.json";

    pub fn in_dir(data_dir: &Path) -> SettingsFile {
        SettingsFile {
            path: data_dir.join(Self::FILE_NAME),
            write_lock: Mutex::new(()),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The saved settings; none saved yet is the empty default.
    pub fn load(&self) -> Result<StoredSettings, SettingsFileError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(StoredSettings::default());
            }
            Err(source) => {
                return Err(SettingsFileError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|source| SettingsFileError::Syntax {
            path: self.path.clone(),
            source,
        })
    }

    /// Applies a change from the settings panel and saves the result.
    pub fn update(&self, update: &LlmSettingsUpdate) -> Result<StoredSettings, SettingsFileError> {
        let _guard = self
            .write_lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut settings = self.load()?;
        apply(&mut settings.llm, update)?;
        self.save(&settings)?;
        Ok(settings)
    }

    /// Replaces one of the sections other parts of the IDE keep here.
    pub fn set_section(
        &self,
        name: &str,
        value: serde_json::Value,
    ) -> Result<(), SettingsFileError> {
        let _guard = self
            .write_lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut settings = self.load()?;
        settings.other.insert(name.to_owned(), value);
        self.save(&settings)
    }

    /// Replaces the file atomically, readable only by Rivet's user: a crash
    /// leaves either the old or the new settings, never half of them.
    fn save(&self, settings: &StoredSettings) -> Result<(), SettingsFileError> {
        let write_err = |source| SettingsFileError::Write {
            path: self.path.clone(),
            source,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(write_err)?;
        let json =
            serde_json::to_vec_pretty(settings).map_err(|e| write_err(std::io::Error::other(e)))?;
        crate::server::atomic::write_private(&self.path, &json).map_err(write_err)
    }
}

fn apply(llm: &mut StoredLlm, update: &LlmSettingsUpdate) -> Result<(), SettingsFileError> {
    let provider_id = update.provider.trim();
    if !provider_id.is_empty() && provider::preset(provider_id).is_none() {
        return Err(SettingsFileError::UnknownProvider(provider_id.to_owned()));
    }
    // Keys saved before URLs were recorded keep the URL they were used with,
    // before this update changes the base URL.
    let unrecorded: Vec<String> = llm
        .api_keys
        .keys()
        .filter(|id| !llm.key_urls.contains_key(*id))
        .cloned()
        .collect();
    for id in unrecorded {
        let url = llm.key_url(&id);
        llm.key_urls.insert(id, url);
    }
    llm.provider = provider_id.to_owned();
    // A preset's own URL is not an override; storing it would pin it.
    let base_url = provider::normalize_base_url(&update.base_url);
    let preset_url = provider::preset(provider_id).map_or("", |p| p.base_url);
    llm.base_url = if base_url == preset_url {
        String::new()
    } else {
        base_url
    };
    llm.model = update.model.trim().to_owned();
    let model = llm.model.clone();
    llm.set_format(provider_id, &model, update.format);
    let slot = key_slot(provider_id).to_owned();
    match &update.key {
        KeyUpdate::Keep => {}
        KeyUpdate::Set(key) => {
            let key = Secret::new(key)?;
            llm.api_keys.insert(slot.clone(), key.expose().to_owned());
            // The key goes with the URL it is saved with, and no other.
            llm.key_urls.insert(slot, llm.base_url.clone());
        }
        KeyUpdate::Clear => {
            llm.api_keys.remove(&slot);
            llm.key_urls.remove(&slot);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(provider: &str, base_url: &str, key: KeyUpdate) -> LlmSettingsUpdate {
        LlmSettingsUpdate {
            provider: provider.into(),
            base_url: base_url.into(),
            model: " m ".into(),
            key,
            format: None,
        }
    }

    #[test]
    fn the_answer_format_is_kept_per_provider_and_model() {
        let dir = tempfile::tempdir().unwrap();
        let file = SettingsFile::in_dir(dir.path());
        let with = |provider: &str, model: &str, format| LlmSettingsUpdate {
            provider: provider.into(),
            model: model.into(),
            format,
            ..LlmSettingsUpdate::default()
        };
        file.update(&with(
            "ollama",
            "qwen2.5-coder:1.5b",
            Some(ActionFormat::Tools),
        ))
        .unwrap();
        let s = file
            .update(&with("ollama", "llama3.2", Some(ActionFormat::Tags)))
            .unwrap();
        assert_eq!(
            s.llm.format_for("ollama", "qwen2.5-coder:1.5b"),
            Some(ActionFormat::Tools)
        );
        assert_eq!(
            s.llm.format_for("ollama", "llama3.2"),
            Some(ActionFormat::Tags)
        );
        // Another provider's model of the same name has no choice of its own.
        assert_eq!(s.llm.format_for("lmstudio", "llama3.2"), None);
        // Saving a model with no choice clears its choice only.
        let s = file.update(&with("ollama", "llama3.2", None)).unwrap();
        assert_eq!(s.llm.format_for("ollama", "llama3.2"), None);
        assert_eq!(
            file.load()
                .unwrap()
                .llm
                .format_for("ollama", "qwen2.5-coder:1.5b"),
            Some(ActionFormat::Tools)
        );
        // A choice saved with no model named is the provider's first model's.
        let s = file
            .update(&with("ollama", "", Some(ActionFormat::Tags)))
            .unwrap();
        assert_eq!(
            s.llm.format_for("ollama", "whatever-it-lists"),
            Some(ActionFormat::Tags)
        );
    }

    #[test]
    fn saving_is_atomic_private_and_keeps_other_sections() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = SettingsFile::in_dir(dir.path());
        std::fs::write(file.path(), r#"{"editor":{"font":14}}"#).unwrap();
        let saved = file
            .update(&update("groq", "", KeyUpdate::Set(" gsk-1 ".into())))
            .unwrap();
        assert_eq!(saved.llm.provider, "groq");
        assert_eq!(saved.llm.model, "m");
        assert_eq!(saved.llm.api_keys["groq"], "gsk-1");
        let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let loaded = file.load().unwrap();
        assert_eq!(loaded.other["editor"]["font"], 14);
        assert_eq!(loaded, saved);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, [SettingsFile::FILE_NAME]);
    }

    #[test]
    fn keys_are_kept_per_provider_and_cleared_on_request() {
        let dir = tempfile::tempdir().unwrap();
        let file = SettingsFile::in_dir(dir.path());
        file.update(&update("groq", "", KeyUpdate::Set("gsk-1".into())))
            .unwrap();
        let s = file
            .update(&update("openai", "", KeyUpdate::Set("sk-2".into())))
            .unwrap();
        assert_eq!(s.llm.api_keys.len(), 2);
        let s = file.update(&update("groq", "", KeyUpdate::Clear)).unwrap();
        assert_eq!(s.llm.api_keys.keys().collect::<Vec<_>>(), ["openai"]);
        let s = file.update(&update("openai", "", KeyUpdate::Keep)).unwrap();
        assert_eq!(s.llm.api_keys["openai"], "sk-2");
    }

    #[test]
    fn bad_updates_are_refused_and_preset_urls_not_pinned() {
        let dir = tempfile::tempdir().unwrap();
        let file = SettingsFile::in_dir(dir.path());
        assert!(matches!(
            file.update(&update("nope", "", KeyUpdate::Keep)),
            Err(SettingsFileError::UnknownProvider(_))
        ));
        assert!(matches!(
            file.update(&update("groq", "", KeyUpdate::Set("a b".into()))),
            Err(SettingsFileError::InvalidKey(_))
        ));
        let s = file
            .update(&update(
                "ollama",
                "http://localhost:11434/v1/",
                KeyUpdate::Keep,
            ))
            .unwrap();
        assert_eq!(s.llm.base_url, "");
        let s = file
            .update(&update(
                "ollama",
                "http://gpu-box:11434/v1/",
                KeyUpdate::Keep,
            ))
            .unwrap();
        assert_eq!(s.llm.base_url, "http://gpu-box:11434/v1");
    }

    #[test]
    fn a_base_url_saved_later_does_not_take_the_stored_key_along() {
        let dir = tempfile::tempdir().unwrap();
        let file = SettingsFile::in_dir(dir.path());
        let s = file
            .update(&update(
                "custom",
                "http://gpu-box:8000/v1/",
                KeyUpdate::Set("k-1".into()),
            ))
            .unwrap();
        assert_eq!(s.llm.key_url("custom"), "http://gpu-box:8000/v1");
        // Someone changes only the URL: the key stays with its own.
        let s = file
            .update(&update("custom", "http://any-host/v1", KeyUpdate::Keep))
            .unwrap();
        assert_eq!(s.llm.base_url, "http://any-host/v1");
        assert_eq!(s.llm.key_url("custom"), "http://gpu-box:8000/v1");
        // Typing the key again with the new URL moves it there.
        let s = file
            .update(&update(
                "custom",
                "http://any-host/v1",
                KeyUpdate::Set("k-2".into()),
            ))
            .unwrap();
        assert_eq!(s.llm.key_url("custom"), "http://any-host/v1");
        // A preset's key saved without a URL goes with the preset's.
        let s = file
            .update(&update(
                "openai",
                "https://api.openai.com/v1",
                KeyUpdate::Set("sk".into()),
            ))
            .unwrap();
        assert_eq!(s.llm.key_url("openai"), "");
        let s = file
            .update(&update("custom", "", KeyUpdate::Clear))
            .unwrap();
        assert!(!s.llm.key_urls.contains_key("custom"));
    }

    #[test]
    fn keys_saved_before_urls_were_recorded_keep_the_url_they_were_used_with() {
        let dir = tempfile::tempdir().unwrap();
        let file = SettingsFile::in_dir(dir.path());
        std::fs::write(
            file.path(),
            r#"{"llm":{"provider":"custom","base_url":"http://gpu-box:8000/v1",
                "api_keys":{"custom":"k","openai":"sk"}}}"#,
        )
        .unwrap();
        let old = file.load().unwrap();
        assert_eq!(old.llm.key_url("custom"), "http://gpu-box:8000/v1");
        assert_eq!(old.llm.key_url("openai"), "");
        // The first save records them before it changes the base URL.
        let s = file
            .update(&update("custom", "http://any-host/v1", KeyUpdate::Keep))
            .unwrap();
        assert_eq!(s.llm.key_urls["custom"], "http://gpu-box:8000/v1");
        assert_eq!(s.llm.key_urls["openai"], "");
        assert_eq!(file.load().unwrap(), s);
    }

    #[test]
    fn debug_output_names_providers_not_keys() {
        let mut llm = StoredLlm::default();
        llm.api_keys.insert("openai".into(), "sk-hidden".into());
        let shown = format!("{llm:?}");
        assert!(
            shown.contains("openai") && !shown.contains("sk-hidden"),
            "{shown}"
        );
    }
}
