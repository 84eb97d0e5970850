use std::collections::HashSet;

use super::*;
use crate::runtime::path::ProjectPath;

#[test]
fn the_list_matches_the_shared_infos_in_order() {
    let ids: Vec<TemplateInfo> = all().iter().map(|t| t.info).collect();
    assert_eq!(ids, info::ALL.to_vec());
}

#[test]
fn ids_are_unique() {
    let ids: HashSet<&str> = all().iter().map(|t| t.info.id).collect();
    assert_eq!(ids.len(), all().len());
}

#[test]
fn every_template_has_a_package_json_with_a_dev_script() {
    for template in all() {
        let (_, text) = template
            .files
            .iter()
            .find(|(path, _)| *path == "package.json")
            .unwrap_or_else(|| panic!("{} has no package.json", template.info.id));
        let json: serde_json::Value = serde_json::from_str(text).unwrap();
        let dev = json["scripts"]["dev"].as_str().unwrap_or_default();
        assert!(!dev.is_empty(), "{}: {json}", template.info.id);
    }
}

#[test]
fn every_path_is_a_safe_relative_path_and_no_lock_file_ships() {
    for template in all() {
        let mut seen = HashSet::new();
        for (path, text) in template.files {
            let checked = ProjectPath::parse(path).unwrap();
            assert_eq!(checked.as_str(), *path, "{} is not normal", path);
            assert!(transfer::staging::safe_path(path).is_ok(), "{path}");
            assert!(!path.ends_with("-lock.json") && !path.ends_with(".lock"));
            assert!(!text.is_empty(), "{}/{path} is empty", template.info.id);
            assert!(seen.insert(*path), "{path} twice");
        }
    }
}

#[test]
fn find_knows_every_id_and_nothing_else() {
    for template in all() {
        assert_eq!(find(template.info.id).map(|t| t.info), Some(template.info));
    }
    assert!(find("").is_none());
    assert!(find("React-TS").is_none());
    assert!(find("cobol").is_none());
}

#[test]
fn the_node_api_listens_on_the_port_it_is_given() {
    let node = find("node-api").unwrap();
    let server = node
        .files
        .iter()
        .find(|(p, _)| *p == "server.js")
        .unwrap()
        .1;
    assert!(server.contains("process.env.PORT"));
    assert!(node.files[0].1.contains("node --watch server.js"));
}

#[tokio::test]
async fn a_project_from_a_template_holds_its_files_and_is_named_after_it() {
    let (state, _data) = crate::server::state::for_tests(|_| {});
    let row = from_template(&state, None, "vue").await.unwrap();
    assert_eq!(row.name, "Vite + Vue");
    let id = crate::runtime::project::ProjectId::parse(&row.id).unwrap();
    let workspace = state.projects.workspace(&id);
    for (path, text) in find("vue").unwrap().files {
        assert_eq!(
            std::fs::read_to_string(workspace.join(path)).unwrap(),
            *text
        );
    }
    let named = from_template(&state, Some("  Mine "), "vanilla")
        .await
        .unwrap();
    assert_eq!(named.name, "Mine");
}

#[tokio::test]
async fn an_unknown_template_makes_no_project() {
    let (state, _data) = crate::server::state::for_tests(|_| {});
    let error = from_template(&state, Some("x"), "cobol").await.unwrap_err();
    assert!(matches!(error, TransferError::UnknownTemplate(ref id) if id == "cobol"));
    assert!(state.store.list_projects().await.unwrap().is_empty());
}
