//! Which package manager a project uses, and whether a command is nothing
//! but its plain install (so it may join the install that started early).

/// A package manager the runner knows how to install with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Manager {
    Npm,
    Pnpm,
    Yarn,
}

impl Manager {
    /// The command the early install runs.
    pub fn install(self) -> &'static str {
        match self {
            Manager::Npm => "npm install",
            Manager::Pnpm => "pnpm install",
            Manager::Yarn => "yarn install",
        }
    }

    fn named(name: &str) -> Option<Manager> {
        match name {
            "npm" => Some(Manager::Npm),
            "pnpm" => Some(Manager::Pnpm),
            "yarn" => Some(Manager::Yarn),
            _ => None,
        }
    }
}

/// Lockfiles, in the order they decide.
const LOCKFILES: [(&str, Manager); 3] = [
    ("package-lock.json", Manager::Npm),
    ("pnpm-lock.yaml", Manager::Pnpm),
    ("yarn.lock", Manager::Yarn),
];

/// The project's package manager: its lockfile (among the names in the
/// project's root), else `packageManager` in `package.json`
/// (`"pnpm@9.1.0"`), else npm.
pub fn package_manager<'a>(
    root: impl IntoIterator<Item = &'a str>,
    package_json: &serde_json::Value,
) -> Manager {
    let root: Vec<&str> = root.into_iter().collect();
    let locked = LOCKFILES
        .iter()
        .find(|(lockfile, _)| root.contains(lockfile))
        .map(|(_, manager)| *manager);
    let declared = || {
        let field = package_json.get("packageManager")?.as_str()?;
        Manager::named(field.split('@').next()?.trim())
    };
    locked.or_else(declared).unwrap_or(Manager::Npm)
}

/// A command whose first step is a plain install.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlainInstall<'a> {
    pub manager: Manager,
    /// What runs after it in the `&&` chain, if anything.
    pub rest: Option<&'a str>,
}

/// Whether `command` is a plain install (`npm install`, `npm i`, `pnpm
/// install`, `pnpm i`, `yarn`, `yarn install`: no packages, no flags),
/// alone or first in an `&&` chain. Anything else (`npm install left-pad`,
/// `npm ci`, `npm install; npm run dev`) is `None` and runs as written.
pub fn plain_install(command: &str) -> Option<PlainInstall<'_>> {
    let command = command.trim();
    let (first, rest) = match command.split_once("&&") {
        Some((first, rest)) => (first, Some(rest.trim())),
        None => (command, None),
    };
    if rest == Some("") {
        return None;
    }
    let words: Vec<&str> = first.split_whitespace().collect();
    let manager = match words.as_slice() {
        ["npm", "install" | "i"] => Manager::Npm,
        ["pnpm", "install" | "i"] => Manager::Pnpm,
        ["yarn"] | ["yarn", "install"] => Manager::Yarn,
        _ => return None,
    };
    Some(PlainInstall { manager, rest })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Manager::*;

    /// The manager, and what follows in the chain.
    type Expected = Option<(Manager, Option<&'static str>)>;

    #[test]
    fn plain_installs_are_recognised_and_nothing_else() {
        let cases: &[(&str, Expected)] = &[
            ("npm install", Some((Npm, None))),
            ("npm i", Some((Npm, None))),
            ("  npm   install \n", Some((Npm, None))),
            ("pnpm install", Some((Pnpm, None))),
            ("pnpm i", Some((Pnpm, None))),
            ("yarn", Some((Yarn, None))),
            ("yarn install", Some((Yarn, None))),
            (
                "npm install && npm run dev",
                Some((Npm, Some("npm run dev"))),
            ),
            (
                "npm i && npm run build && npm test",
                Some((Npm, Some("npm run build && npm test"))),
            ),
            ("npm install left-pad", None),
            ("npm i -D vite", None),
            ("npm install --legacy-peer-deps", None),
            ("npm ci", None),
            ("yarn add react", None),
            ("pnpm add react", None),
            ("npm install; npm run dev", None),
            ("npm install || true", None),
            ("npm install | tee log", None),
            ("npm install # deps", None),
            ("npm install\nnpm run dev", None),
            ("npm install &&", None),
            ("cd app && npm install", None),
            ("npm run dev", None),
            ("", None),
        ];
        for (command, expected) in cases {
            let got = plain_install(command).map(|p| (p.manager, p.rest));
            assert_eq!(got, *expected, "{command:?}");
        }
    }

    #[test]
    fn the_lockfile_then_package_manager_then_npm_decide() {
        let cases: &[(&[&str], &str, Manager)] = &[
            (&["package.json"], "{}", Npm),
            (&["package.json", "package-lock.json"], "{}", Npm),
            (&["pnpm-lock.yaml"], "{}", Pnpm),
            (&["yarn.lock", "src"], "{}", Yarn),
            (&[], r#"{"packageManager": "pnpm@9.1.0"}"#, Pnpm),
            (&[], r#"{"packageManager": "yarn@4.2.2+sha224.abc"}"#, Yarn),
            (&[], r#"{"packageManager": "npm@10.8.0"}"#, Npm),
            (&["yarn.lock"], r#"{"packageManager": "pnpm@9.1.0"}"#, Yarn),
            (&[], r#"{"packageManager": "bun@1.1.0"}"#, Npm),
            (&[], r#"{"packageManager": 7}"#, Npm),
            (&[], "[]", Npm),
        ];
        for (root, json, expected) in cases {
            let json: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(
                package_manager(root.iter().copied(), &json),
                *expected,
                "{root:?} {json}"
            );
        }
    }
}
