//! The starter templates a new project can begin from: their ids, names
//! and descriptions, which the projects page lists on both sides. Their
//! files live only in the server (`server::templates`), never in the WASM
//! bundle.

use serde::Serialize;

/// What a template is called and what it holds, without its files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TemplateInfo {
    /// The stable id the API and the form send (`react-ts`).
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
}

pub const REACT_TS: TemplateInfo = TemplateInfo {
    id: "react-ts",
    name: "Vite + React + TypeScript",
    description: "A React 19 counter page in TypeScript, served by Vite.",
};

pub const VUE: TemplateInfo = TemplateInfo {
    id: "vue",
    name: "Vite + Vue",
    description: "A Vue 3 single-file component counter, served by Vite.",
};

pub const SVELTE: TemplateInfo = TemplateInfo {
    id: "svelte",
    name: "Vite + Svelte",
    description: "A Svelte 5 counter component, served by Vite.",
};

pub const VANILLA: TemplateInfo = TemplateInfo {
    id: "vanilla",
    name: "Vanilla JS",
    description: "Plain HTML, CSS and JavaScript, served by Vite.",
};

pub const NODE_API: TemplateInfo = TemplateInfo {
    id: "node-api",
    name: "Node API server",
    description: "A JSON API on node:http with no dependencies, restarted on every save.",
};

/// Every template, in the order the projects page offers them.
pub const ALL: [TemplateInfo; 5] = [REACT_TS, VUE, SVELTE, VANILLA, NODE_API];
