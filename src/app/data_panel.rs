//! The data panel: the project's PostgreSQL database as the person sees
//! it: its tables with their columns and row counts, the first rows of
//! one, and a box for their own SQL. It reaches the database only through
//! the server functions below (`crate::server::session::database`).

mod result_table;

use leptos::prelude::*;

pub use self::result_table::ResultTable;
use crate::app::error::RivetError;
use crate::runtime::database::{QueryResult, TableInfo};
use crate::runtime::project::ProjectId;

#[server(endpoint = "database_tables")]
pub async fn database_tables(project: ProjectId) -> Result<Vec<TableInfo>, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::database::tables(&state, &project).await?)
}

#[server(endpoint = "database_query")]
pub async fn database_query(project: ProjectId, sql: String) -> Result<QueryResult, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::database::query(&state, &project, &sql).await?)
}

/// A `supabase` migration of a project that runs in the browser (its
/// database is on the server): whether it ran now (`false`: it had).
#[server(endpoint = "database_migrate")]
pub async fn database_migrate(
    project: ProjectId,
    name: String,
    sql: String,
) -> Result<bool, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::database::migrate(&state, &project, &name, &sql).await?)
}

#[server(endpoint = "database_rebuild")]
pub async fn database_rebuild(project: ProjectId) -> Result<Vec<String>, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::database::rebuild(&state, &project).await?)
}

/// The first rows of `table` (a name the panel listed).
fn first_rows_sql(table: &str) -> String {
    let quoted: Vec<String> = table
        .split('.')
        .map(|part| format!("\"{}\"", part.replace('"', "\"\"")))
        .collect();
    format!("select * from {} limit 100", quoted.join("."))
}

#[component]
pub fn DataPanel(project: ProjectId) -> impl IntoView {
    let project = StoredValue::new(project);
    let run = ServerAction::<DatabaseQuery>::new();
    let rebuild = ServerAction::<DatabaseRebuild>::new();
    let refresh = RwSignal::new(0u32);
    let tables = Resource::new(
        move || (refresh.get(), run.version().get(), rebuild.version().get()),
        move |_| async move { database_tables(project.get_value()).await },
    );
    let sql = RwSignal::new(String::new());
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        run.dispatch(DatabaseQuery {
            project: project.get_value(),
            sql: sql.get_untracked(),
        });
    };
    let open_table = move |name: String| {
        let text = first_rows_sql(&name);
        sql.set(text.clone());
        run.dispatch(DatabaseQuery {
            project: project.get_value(),
            sql: text,
        });
    };
    view! {
        <div class="data-panel" data-testid="data-panel">
            <aside class="data-tables">
                <div class="data-tables-head">
                    <strong>"Tables"</strong>
                    <button type="button" data-testid="data-refresh" on:click=move |_| refresh.update(|n| *n += 1)>
                        "Refresh"
                    </button>
                </div>
                <button type="button" class="data-rebuild" data-testid="data-rebuild"
                    title="An empty database, then every file of supabase/migrations in order: the data is deleted"
                    disabled=move || rebuild.pending().get()
                    on:click=move |_| { rebuild.dispatch(DatabaseRebuild { project: project.get_value() }); }>
                    "Rebuild from migrations"
                </button>
                {move || rebuild.value().get().map(|done| match done {
                    Ok(ran) => view! {
                        <p class="data-note" data-testid="data-rebuilt">{format!("Rebuilt: {} migrations ran.", ran.len())}</p>
                    }.into_any(),
                    Err(error) => view! {
                        <p class="data-error" role="alert" data-testid="data-error">{error.to_string()}</p>
                    }.into_any(),
                })}
                <Transition fallback=|| view! { <p class="data-note">"Loading…"</p> }>
                    {move || tables.get().map(|listed| match listed {
                        Ok(listed) => view! { <TableList listed open_table /> }.into_any(),
                        Err(error) => view! {
                            <p class="data-error" role="alert" data-testid="data-error">{error.to_string()}</p>
                        }.into_any(),
                    })}
                </Transition>
            </aside>
            <section class="data-query">
                <form on:submit=submit>
                    <textarea data-testid="data-sql" rows="3" spellcheck="false"
                        placeholder="select * from todos"
                        prop:value=move || sql.get()
                        on:input:target=move |ev| sql.set(ev.target().value())></textarea>
                    <button type="submit" data-testid="data-run" disabled=move || run.pending().get()>"Run"</button>
                </form>
                {move || run.value().get().map(|answer| match answer {
                    Ok(result) => view! { <ResultTable result /> }.into_any(),
                    Err(error) => view! {
                        <pre class="data-error" role="alert" data-testid="data-error">{error.to_string()}</pre>
                    }.into_any(),
                })}
            </section>
        </div>
    }
}

#[component]
fn TableList(
    listed: Vec<TableInfo>,
    open_table: impl Fn(String) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    if listed.is_empty() {
        return view! {
            <p class="data-note">"No tables yet. Ask for an app that stores data, or create one with SQL."</p>
        }
        .into_any();
    }
    listed
        .into_iter()
        .map(|table| {
            let columns = table
                .columns
                .iter()
                .map(|c| format!("{} {}", c.name, c.kind))
                .collect::<Vec<_>>()
                .join(", ");
            let name = table.name.clone();
            view! {
                <button type="button" class="data-table" data-testid="data-table" title=columns
                    on:click=move |_| open_table(name.clone())>
                    <span class="data-table-name">{table.name}</span>
                    <span class="data-table-rows" data-testid="data-table-rows">{table.rows}</span>
                </button>
            }
        })
        .collect_view()
        .into_any()
}

#[cfg(test)]
mod tests {
    use super::first_rows_sql;

    #[test]
    fn a_listed_table_is_quoted_schema_and_all() {
        assert_eq!(first_rows_sql("todos"), "select * from \"todos\" limit 100");
        assert_eq!(
            first_rows_sql("app.odd\"name"),
            "select * from \"app\".\"odd\"\"name\" limit 100"
        );
    }
}
