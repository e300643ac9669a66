//! The drift check and the pinned list of generated operations.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use xtask::codegen;
use xtask::contract;
use xtask::generator::{CodegenError, SPEC_PATH};
use xtask::requests;
use xtask::rules;

fn read(relative: &str) -> String {
    std::fs::read_to_string(xtask::workspace_root().join(relative)).unwrap()
}

#[test]
fn checked_in_code_matches_the_spec() {
    let spec = read(SPEC_PATH);
    for (generated, path) in [
        (codegen::generate(&spec).unwrap(), codegen::OUTPUT_PATH),
        (
            codegen::generate_contract(&spec).unwrap(),
            contract::OUTPUT_PATH,
        ),
        (requests::generate(&spec).unwrap(), requests::OUTPUT_PATH),
    ] {
        codegen::check(&generated, &read(path), Path::new(path))
            .expect("run `cargo xtask codegen` and commit the result");
    }
}

/// The request builders generated, one per operation, by name.
fn generated_operation_ids() -> Vec<String> {
    let file = syn::parse_file(&read(requests::OUTPUT_PATH)).unwrap();
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Fn(function) if matches!(function.vis, syn::Visibility::Public(_)) => {
                Some(function.sig.ident.to_string())
            }
            _ => None,
        })
        .collect()
}

/// The contract's table names each operation as its request builder is named, so a span or a
/// recording's operation and the builder that made its request agree.
#[test]
fn the_contract_names_every_generated_operation() {
    let contract = read(contract::OUTPUT_PATH);
    let mut in_contract: Vec<String> = contract
        .split("method_name: \"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next().map(str::to_owned))
        .collect();
    let mut in_client = generated_operation_ids();
    in_contract.sort();
    in_client.sort();
    assert!(!in_client.is_empty());
    assert_eq!(in_contract, in_client);
}

#[test]
fn editing_the_spec_without_regenerating_is_caught() {
    let spec = read(SPEC_PATH);
    let edited = spec.replacen(
        "summary: Check reachability and credentials",
        "summary: Check reachability and credentials (edited)",
        1,
    );
    assert_ne!(spec, edited, "the edit must apply");
    let generated = requests::generate(&edited).unwrap();
    let error = codegen::check(
        &generated,
        &read(requests::OUTPUT_PATH),
        Path::new(requests::OUTPUT_PATH),
    )
    .unwrap_err();
    assert!(matches!(error, CodegenError::Drift { .. }));
    assert!(
        error.to_string().contains("run `cargo xtask codegen`"),
        "{error}"
    );
}

#[test]
fn an_invalid_spec_is_a_clear_error() {
    let error = codegen::generate("openapi: 3.0.3\ninfo: [").unwrap_err();
    assert!(error.to_string().contains("not a valid OpenAPI"), "{error}");
}

/// Every request builder with its signature: a spec change shows up as a reviewed snapshot diff.
#[test]
fn generated_operations_are_pinned() {
    let file = syn::parse_file(&read(requests::OUTPUT_PATH)).unwrap();
    let mut listing: syn::File = syn::parse_quote!();
    for item in &file.items {
        if let syn::Item::Fn(function) = item
            && matches!(function.vis, syn::Visibility::Public(_))
        {
            let sig = &function.sig;
            listing.items.push(syn::parse_quote!(pub #sig {}));
        }
    }
    assert_eq!(
        listing.items.len(),
        generated_operation_ids().len(),
        "one builder per operation"
    );
    insta::assert_snapshot!(prettyplease::unparse(&listing));
}

/// A money field added to the spec (`allOf: [Money]`) is generated as `Money`, with no hand edit.
#[test]
fn a_money_field_added_to_the_spec_is_generated_as_money() {
    let spec = read(SPEC_PATH);
    let anchor = "        subtotalCost:\n";
    let edited = spec.replacen(
        anchor,
        "        giftWrapCost:\n          allOf:\n            - $ref: \"#/components/schemas/Money\"\n          description: Gift wrapping, US dollars.\n        subtotalCost:\n",
        1,
    );
    assert_ne!(spec, edited, "the edit must apply");
    let generated = codegen::generate(&edited).unwrap();
    assert!(
        generated.contains("pub gift_wrap_cost: ::std::option::Option<crate::money::Money>,"),
        "the new field is Money"
    );
}

/// The spec's open enumerations (`anyOf: [{enum: [...]}, {type: string}]`) rewritten in the other standard
/// spelling, the Zalando guidelines' `type: string` + `x-extensible-enum: [...]`: the three generated
/// files are the same, byte for byte.
#[test]
fn both_open_enum_spellings_generate_the_same_code() {
    let spec = read(SPEC_PATH);
    let mut document: serde_norway::Value = serde_norway::from_str(&spec).unwrap();
    let schemas = document
        .get_mut("components")
        .and_then(|c| c.get_mut("schemas"))
        .and_then(serde_norway::Value::as_mapping_mut)
        .unwrap();
    let mut rewritten = Vec::new();
    for (name, schema) in schemas.iter_mut() {
        let Some(known) = schema
            .get("anyOf")
            .and_then(serde_norway::Value::as_sequence)
            .and_then(|branches| branches.iter().find(|b| b.get("enum").is_some()))
            .cloned()
        else {
            continue;
        };
        let schema = schema.as_mapping_mut().unwrap();
        schema.remove("anyOf");
        schema.insert("type".into(), "string".into());
        schema.insert(
            "x-enumDescriptions".into(),
            known["x-enumDescriptions"].clone(),
        );
        schema.insert("x-extensible-enum".into(), known["enum"].clone());
        rewritten.push(name.as_str().unwrap().to_owned());
    }
    assert_eq!(rewritten, contract::open_enum_names(&spec).unwrap());
    assert_eq!(rewritten.len(), 6);
    let zalando = serde_norway::to_string(&document).unwrap();
    assert!(!zalando.contains("anyOf:"));
    assert_eq!(
        codegen::generate(&zalando).unwrap(),
        codegen::generate(&spec).unwrap()
    );
    assert_eq!(
        codegen::generate_contract(&zalando).unwrap(),
        codegen::generate_contract(&spec).unwrap()
    );
    assert_eq!(
        rules::generate(&zalando).unwrap(),
        rules::generate(&spec).unwrap()
    );
}

/// The spelling the spec used before (a closed `enum` marked `x-extensible-enum: true`), which every
/// other generator reads as closed, is refused with the spellings to use.
#[test]
fn an_open_enum_other_generators_read_as_closed_is_refused() {
    let spec = read(SPEC_PATH);
    let closed = spec.replacen(
        "    ProductStatus:\n",
        "    ProductStatus:\n      type: string\n      x-extensible-enum: true\n      enum: [active, draft, unlisted, archived]\n    ProductStatusWas:\n",
        1,
    );
    assert_ne!(spec, closed, "the edit must apply");
    let error = codegen::generate(&closed).unwrap_err().to_string();
    assert!(
        error.contains("ProductStatus: `x-extensible-enum: true` beside a closed `enum`")
            && error.contains("anyOf"),
        "{error}"
    );
}
