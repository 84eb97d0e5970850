//! Each project's PostgreSQL database: one database and one role per
//! project, created on first use, on the server Rivet runs
//! ([`cluster`]) or on the one `[database] url` names.
//!
//! A project's role is an ordinary one (no superuser, no `CREATEDB`, no
//! `CREATEROLE`) that owns its database; `CONNECT` on that database is
//! revoked from `PUBLIC`, so no other project's role can open it. Its
//! random password is kept like app secrets (`<data_dir>/databases`, 0600),
//! and its processes get it as `DATABASE_URL` and `PG*` variables, masked
//! in their output like secrets. Migrations run as the project's role and
//! are recorded in its database's `rivet.migrations` table.
//!
//! This module owns the databases; the runner reaches one through
//! [`crate::runtime::database::Database`], the routes through
//! [`Databases::tables`] and [`Databases::query`].

mod cluster;
mod project;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use self::cluster::{Cluster, Layout};
use crate::runtime::database::{Database, DatabaseError, Migrated, QueryResult, TableInfo};
use crate::runtime::project::ProjectId;
use crate::server::config::Config;
use crate::server::private_files::PrivateFiles;

/// The variables of [`Databases::env`] that hold the password, masked in
/// the processes' output; the others (host, port, names) are shown.
pub const SECRET_VARS: [&str; 2] = ["DATABASE_URL", "PGPASSWORD"];

/// Where a project's processes find the socket's folder.
pub const SANDBOX_SOCKET_DIR: &str = "/run/postgresql";

/// Why a project has no database here, in words for the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DatabaseUnavailable(pub String);

impl From<DatabaseUnavailable> for DatabaseError {
    fn from(error: DatabaseUnavailable) -> DatabaseError {
        DatabaseError::Unavailable(error.0)
    }
}

/// A project's role and database, and the role's password.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Credentials {
    role: String,
    database: String,
    password: String,
}

impl Credentials {
    fn new(project: &ProjectId) -> Credentials {
        let name = format!("project_{}", project.as_str());
        Credentials {
            role: name.clone(),
            database: name,
            password: random_secret(),
        }
    }
}

/// The server the databases are on.
enum Server {
    Managed(Cluster),
    External(tokio_postgres::Config),
}

impl Server {
    fn admin(&self) -> &tokio_postgres::Config {
        match self {
            Server::Managed(cluster) => &cluster.admin,
            Server::External(config) => config,
        }
    }
}

pub struct Databases {
    url: String,
    bin_dir: String,
    layout: Layout,
    credentials: PrivateFiles,
    server: tokio::sync::Mutex<Option<Server>>,
    /// Projects whose role and database exist, checked since Rivet started.
    ready: Mutex<HashSet<ProjectId>>,
    /// Held while a project's role and database are made.
    provisioning: tokio::sync::Mutex<()>,
    /// Processes run without a sandbox (`--unsafe-no-sandbox`): they see
    /// the socket where it is, not at [`SANDBOX_SOCKET_DIR`].
    unsandboxed: std::sync::atomic::AtomicBool,
}

impl Databases {
    pub fn new(config: &Config) -> Arc<Databases> {
        Arc::new(Databases {
            url: config.database.url.clone(),
            bin_dir: config.database.bin_dir.clone(),
            layout: Layout::new(&config.server.data_dir),
            credentials: PrivateFiles::new(&config.server.data_dir, "databases"),
            server: tokio::sync::Mutex::new(None),
            ready: Mutex::new(HashSet::new()),
            provisioning: tokio::sync::Mutex::new(()),
            unsandboxed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Processes will run without a sandbox, so their variables name the
    /// socket's folder as it is on this machine.
    pub fn without_sandbox(&self) {
        self.unsandboxed
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The project's database, as the runner uses it: made on first use.
    pub fn for_project(self: &Arc<Self>, project: &ProjectId) -> Arc<dyn Database> {
        Arc::new(ProjectDatabase {
            databases: Arc::clone(self),
            project: project.clone(),
        })
    }

    /// The superuser's connection settings, starting the server first if
    /// Rivet runs it. A failure is not kept: the next use tries again.
    async fn admin(&self) -> Result<tokio_postgres::Config, DatabaseUnavailable> {
        let mut server = self.server.lock().await;
        if server.is_none() {
            *server = Some(if self.url.is_empty() {
                let cluster = Cluster::start(&self.layout, &self.bin_dir).await?;
                project::close_shared_databases(&cluster.admin).await?;
                Server::Managed(cluster)
            } else {
                Server::External(external(&self.url)?)
            });
        }
        server
            .as_ref()
            .map(|s| s.admin().clone())
            .ok_or_else(|| DatabaseUnavailable("the database server is not running".to_owned()))
    }

    /// Connection settings as the project's role, after making its role and
    /// database if they do not exist.
    async fn project_config(
        &self,
        project: &ProjectId,
    ) -> Result<tokio_postgres::Config, DatabaseUnavailable> {
        let admin = self.admin().await?;
        let _provisioning = self.provisioning.lock().await;
        let credentials = self.credentials(project)?;
        let ready = self
            .ready
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(project);
        if !ready {
            project::provision(
                &admin,
                &credentials.role,
                &credentials.database,
                &credentials.password,
            )
            .await?;
            self.ready
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(project.clone());
        }
        let mut config = admin;
        config
            .user(&credentials.role)
            .password(credentials.password.as_str())
            .dbname(&credentials.database)
            .options("-c statement_timeout=30000");
        Ok(config)
    }

    /// The project's credentials if it has a database.
    fn kept(&self, project: &ProjectId) -> Result<Option<Credentials>, DatabaseUnavailable> {
        self.credentials.read::<Credentials>(project).map_err(|e| {
            DatabaseUnavailable(format!(
                "the project's database password cannot be read: {e}"
            ))
        })
    }

    /// The project's credentials, made (and kept) the first time.
    fn credentials(&self, project: &ProjectId) -> Result<Credentials, DatabaseUnavailable> {
        let kept = self.kept(project)?;
        if let Some(credentials) = kept {
            return Ok(credentials);
        }
        let credentials = Credentials::new(project);
        self.credentials.write(project, &credentials).map_err(|e| {
            DatabaseUnavailable(format!(
                "the project's database password cannot be kept: {e}"
            ))
        })?;
        Ok(credentials)
    }

    /// The variables the project's processes get once it has a database:
    /// none before.
    pub fn env(&self, project: &ProjectId) -> BTreeMap<String, String> {
        let Ok(Some(credentials)) = self.kept(project) else {
            return BTreeMap::new();
        };
        let (host, port) = self.sandbox_host();
        let Credentials {
            role,
            database,
            password,
        } = credentials;
        let url = if host.starts_with('/') {
            format!("postgresql://{role}:{password}@localhost:{port}/{database}?host={host}")
        } else {
            format!("postgresql://{role}:{password}@{host}:{port}/{database}")
        };
        BTreeMap::from([
            ("DATABASE_URL".to_owned(), url),
            ("PGHOST".to_owned(), host),
            ("PGPORT".to_owned(), port.to_string()),
            ("PGDATABASE".to_owned(), database),
            ("PGUSER".to_owned(), role),
            ("PGPASSWORD".to_owned(), password),
        ])
    }

    /// Where the sandbox reaches the server: its socket folder as mounted
    /// there, or an external server's host.
    fn sandbox_host(&self) -> (String, u16) {
        let unsandboxed = self.unsandboxed.load(std::sync::atomic::Ordering::Relaxed);
        let socket = |real: PathBuf| {
            if unsandboxed {
                real.to_string_lossy().into_owned()
            } else {
                SANDBOX_SOCKET_DIR.to_owned()
            }
        };
        if self.url.is_empty() {
            return (socket(self.layout.socket_dir()), 5432);
        }
        let Ok(config) = external(&self.url) else {
            return (SANDBOX_SOCKET_DIR.to_owned(), 5432);
        };
        let port = port_of(&config);
        if let Some(path) = unix_host(&config) {
            return (socket(path), port);
        }
        match config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(host)) => (host.clone(), port),
            _ => (SANDBOX_SOCKET_DIR.to_owned(), port),
        }
    }

    /// Drops the project's database and role and forgets its password. A
    /// project that never had a database starts no server.
    pub async fn forget(&self, project: &ProjectId) -> Result<(), DatabaseUnavailable> {
        let kept = self.kept(project)?;
        let Some(credentials) = kept else {
            return Ok(());
        };
        let admin = self.admin().await?;
        project::drop(&admin, &credentials.role, &credentials.database).await?;
        self.ready
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(project);
        self.credentials.remove(project).map_err(|e| {
            DatabaseUnavailable(format!(
                "the project's database password cannot be removed: {e}"
            ))
        })
    }

    /// The migrations the project's database has run (name and digest,
    /// oldest first); `None` when the project has no database (none is
    /// made).
    pub async fn applied(
        &self,
        project: &ProjectId,
    ) -> Result<Option<Vec<(String, String)>>, DatabaseError> {
        let kept = self.kept(project)?;
        if kept.is_none() {
            return Ok(None);
        }
        let client = project::connect(&self.project_config(project).await?).await?;
        project::applied(&client).await.map(Some)
    }

    /// Replaces the project's database by an empty one and runs
    /// `migrations` (name and SQL) in order; stops at the first that fails.
    /// Answers the names that ran.
    pub async fn rebuild(
        &self,
        project: &ProjectId,
        migrations: &[(String, String)],
    ) -> Result<Vec<String>, DatabaseError> {
        let admin = self.admin().await?;
        let credentials = self.credentials(project)?;
        {
            let _provisioning = self.provisioning.lock().await;
            project::drop_database(&admin, &credentials.database).await?;
            self.ready
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(project);
        }
        let mut ran = Vec::new();
        for (name, sql) in migrations {
            self.migrate(project, name, sql)
                .await
                .map_err(|error| match error {
                    DatabaseError::Sql(message) => DatabaseError::Sql(format!("{name}: {message}")),
                    other => other,
                })?;
            ran.push(name.clone());
        }
        if migrations.is_empty() {
            // Made again, empty.
            self.project_config(project).await?;
        }
        Ok(ran)
    }

    /// The project's data as `pg_dump` writes it (plain SQL, without owners
    /// or grants, so it replays into any empty database), into `out`,
    /// rewound; `None` when the project has no database.
    pub async fn dump(
        &self,
        project: &ProjectId,
        mut out: std::fs::File,
    ) -> Result<Option<(std::fs::File, u64)>, DatabaseError> {
        use std::io::{Seek, SeekFrom};
        let kept = self.kept(project)?;
        let Some(credentials) = kept else {
            return Ok(None);
        };
        let config = self.project_config(project).await?;
        let program = cluster::find_bin_dir(&self.bin_dir)?.join("pg_dump");
        let host = match (unix_host(&config), config.get_hosts().first()) {
            (Some(dir), _) => dir.to_string_lossy().into_owned(),
            (None, Some(tokio_postgres::config::Host::Tcp(host))) => host.clone(),
            (None, _) => String::new(),
        };
        let port = port_of(&config);
        let stdout = out
            .try_clone()
            .map_err(|e| DatabaseError::Unavailable(format!("pg_dump: {e}")))?;
        let output = tokio::process::Command::new(&program)
            .args(["--no-owner", "--no-privileges", "--format=plain"])
            .env_clear()
            .env("PATH", crate::server::host_tools::path_env())
            .env("PGHOST", host)
            .env("PGPORT", port.to_string())
            .env("PGUSER", &credentials.role)
            .env("PGPASSWORD", &credentials.password)
            .env("PGDATABASE", &credentials.database)
            .stdin(std::process::Stdio::null())
            .stdout(stdout)
            .stderr(std::process::Stdio::piped())
            // Not `output()`, which would capture stdout instead of `out`.
            .spawn()
            .map_err(|e| DatabaseError::Unavailable(format!("pg_dump could not run: {e}")))?
            .wait_with_output()
            .await
            .map_err(|e| DatabaseError::Unavailable(format!("pg_dump could not run: {e}")))?;
        if !output.status.success() {
            return Err(DatabaseError::Unavailable(format!(
                "pg_dump failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        let fail = |e: std::io::Error| DatabaseError::Unavailable(format!("pg_dump's output: {e}"));
        let len = out.seek(SeekFrom::End(0)).map_err(fail)?;
        out.seek(SeekFrom::Start(0)).map_err(fail)?;
        Ok(Some((out, len)))
    }

    /// The project's tables with their columns and row counts.
    pub async fn tables(&self, project: &ProjectId) -> Result<Vec<TableInfo>, DatabaseError> {
        let client = project::connect(&self.project_config(project).await?).await?;
        project::tables(&client).await
    }

    /// Runs `sql` as the project's role.
    pub async fn query(
        &self,
        project: &ProjectId,
        sql: &str,
    ) -> Result<QueryResult, DatabaseError> {
        let client = project::connect(&self.project_config(project).await?).await?;
        project::query(&client, sql).await
    }

    async fn migrate(
        &self,
        project: &ProjectId,
        name: &str,
        sql: &str,
    ) -> Result<Migrated, DatabaseError> {
        let mut client = project::connect(&self.project_config(project).await?).await?;
        project::migrate(&mut client, name, sql).await
    }
}

/// How a migration's text is recorded (its SHA-256), to compare a file
/// with what the database ran.
pub fn migration_digest(sql: &str) -> String {
    project::digest(sql)
}

/// The folder sandboxes see as [`SANDBOX_SOCKET_DIR`]: Rivet's own
/// server's, or an external server's when its URL names a socket folder.
pub fn socket_dir(config: &Config) -> Option<PathBuf> {
    if config.database.url.is_empty() {
        return Some(Layout::new(&config.server.data_dir).socket_dir());
    }
    unix_host(&external(&config.database.url).ok()?)
}

/// A server's port (PostgreSQL's own when the settings name none).
fn port_of(config: &tokio_postgres::Config) -> u16 {
    config.get_ports().first().copied().unwrap_or(5432)
}

/// The socket folder among a server's hosts, if it has one.
fn unix_host(config: &tokio_postgres::Config) -> Option<PathBuf> {
    config.get_hosts().iter().find_map(|host| match host {
        tokio_postgres::config::Host::Unix(path) => Some(path.clone()),
        tokio_postgres::config::Host::Tcp(_) => None,
    })
}

fn external(url: &str) -> Result<tokio_postgres::Config, DatabaseUnavailable> {
    url.parse::<tokio_postgres::Config>()
        .map_err(|e| DatabaseUnavailable(format!("[database] url is not a PostgreSQL URL: {e}")))
}

/// Creates the socket's folder if it is missing, so a sandbox can mount it
/// before the server first starts.
pub fn prepare_socket_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)
}

/// 32 random letters and digits: safe in a URL and in SQL as they are.
fn random_secret() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    (0..32)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect()
}

/// One project's database for the runner.
struct ProjectDatabase {
    databases: Arc<Databases>,
    project: ProjectId,
}

#[async_trait]
impl Database for ProjectDatabase {
    async fn migrate(&self, name: &str, sql: &str) -> Result<Migrated, DatabaseError> {
        self.databases.migrate(&self.project, name, sql).await
    }

    async fn query(&self, sql: &str) -> Result<QueryResult, DatabaseError> {
        self.databases.query(&self.project, sql).await
    }
}
