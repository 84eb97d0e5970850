//! The starter templates shipped in the binary (`templates/<id>/` at the
//! repository's root, embedded with `include_str!`): a new project made
//! from one has its files at once, with no request to the model, and its
//! first message builds on them. Ids, names and descriptions are
//! `runtime::templates`, which the projects page shares.

use crate::runtime::templates::{self as info, TemplateInfo};
use crate::server::state::AppState;
use crate::server::store::ProjectRow;
use crate::server::transfer::{self, TransferError};

/// A template: what the projects page lists and the files it writes, as
/// `(project-relative path, text)`.
#[derive(Debug)]
pub struct Template {
    pub info: TemplateInfo,
    pub files: &'static [(&'static str, &'static str)],
}

/// The files of `templates/<dir>/`, each named by its path there.
macro_rules! files {
    ($dir:literal: $($path:literal),+ $(,)?) => {
        &[$(($path, include_str!(concat!("../../templates/", $dir, "/", $path)))),+]
    };
}

static TEMPLATES: [Template; 5] = [
    Template {
        info: info::REACT_TS,
        files: files!("react-ts": "package.json", "index.html", "vite.config.ts",
            "tsconfig.json", "src/main.tsx", "src/App.tsx", "src/index.css"),
    },
    Template {
        info: info::VUE,
        files: files!("vue": "package.json", "index.html", "vite.config.js",
            "src/main.js", "src/App.vue", "src/style.css"),
    },
    Template {
        info: info::SVELTE,
        files: files!("svelte": "package.json", "index.html", "vite.config.js",
            "src/main.js", "src/App.svelte", "src/app.css"),
    },
    Template {
        info: info::VANILLA,
        files: files!("vanilla": "package.json", "index.html", "main.js", "style.css"),
    },
    Template {
        info: info::NODE_API,
        files: files!("node-api": "package.json", "server.js"),
    },
];

/// Every template, in the order of `runtime::templates::ALL`.
pub fn all() -> &'static [Template] {
    &TEMPLATES
}

/// The template with this id.
pub fn find(id: &str) -> Option<&'static Template> {
    TEMPLATES.iter().find(|t| t.info.id == id)
}

/// A new project holding the template's files, named `name` or, when it
/// is missing or blank, after the template. Made like an import: staged,
/// then placed whole.
pub async fn from_template(
    state: &AppState,
    name: Option<&str>,
    template_id: &str,
) -> Result<ProjectRow, TransferError> {
    let template =
        find(template_id).ok_or_else(|| TransferError::UnknownTemplate(template_id.to_owned()))?;
    let name = transfer::project_name(name, template.info.name)?;
    let mut staged = transfer::staging(state)?;
    for (path, text) in template.files {
        staged.add_file(path, &mut text.as_bytes(), false)?;
    }
    transfer::finish(state, &name, staged).await
}

#[cfg(test)]
mod tests;
