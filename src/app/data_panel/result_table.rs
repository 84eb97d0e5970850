//! A query's result as a table: its columns, its first rows, and how many
//! rows there were in all. Used by the data panel and by a query action's
//! card.

use leptos::prelude::*;

use crate::runtime::database::QueryResult;

#[component]
pub fn ResultTable(result: QueryResult) -> impl IntoView {
    let shown = result.rows.len() as u64;
    let count = match (result.columns.is_empty(), result.total_rows) {
        (true, 1) => "1 row affected".to_owned(),
        (true, n) => format!("{n} rows affected"),
        (false, n) if n > shown => format!("{n} rows, the first {shown} shown"),
        (false, 1) => "1 row".to_owned(),
        (false, n) => format!("{n} rows"),
    };
    let table = (!result.columns.is_empty()).then(|| {
        let header = result
            .columns
            .into_iter()
            .map(|c| view! { <th>{c}</th> })
            .collect_view();
        let rows = result.rows.into_iter().map(row).collect_view();
        view! {
            <div class="result-scroll">
                <table>
                    <thead><tr>{header}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        }
    });
    view! {
        <div class="result-table" data-testid="query-result">
            {table}
            <small class="result-count" data-testid="query-count">{count}</small>
        </div>
    }
}

fn row(values: Vec<Option<String>>) -> impl IntoView {
    let cells = values
        .into_iter()
        .map(|value| match value {
            Some(text) => view! { <td>{text}</td> }.into_any(),
            None => view! { <td class="null">"NULL"</td> }.into_any(),
        })
        .collect_view();
    view! { <tr>{cells}</tr> }
}
