//! Generation of `crates/store-api-raw/src/generated.rs` from `spec/store-api.yaml` with progenitor, and
//! of the request-body rules beside it, `crates/store-api-raw/src/rules.rs` ([`crate::rules`]).
//!
//! Both outputs are checked in: users of the raw crate never build progenitor.
//! `--check` compares the checked-in files with a fresh generation and fails on any difference.

use std::path::Path;

use progenitor::{GenerationSettings, Generator, InterfaceStyle, TagStyle, TypeImpl, TypePatch};

use crate::generator::{CodegenError, SPEC_PATH, generated_file, read};
use crate::rules::RULES_PATH;

/// Generated file path relative to the workspace root.
pub const OUTPUT_PATH: &str = "crates/store-api-raw/src/generated.rs";

/// What `run` does with the generated text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Write the generated file.
    Write,
    /// Compare with the checked-in file and fail on drift.
    Check,
}

/// Regenerates (or checks) the raw crate from the spec of the workspace at `root`.
pub fn run(root: &Path, mode: Mode) -> Result<String, CodegenError> {
    let spec_path = root.join(SPEC_PATH);
    let output_path = root.join(OUTPUT_PATH);
    let rules_path = root.join(RULES_PATH);
    let spec_text = read(&spec_path)?;
    let generated = generate(&spec_text)?;
    let contract_path = root.join(crate::contract::OUTPUT_PATH);
    let contract = generate_contract(&spec_text)?;
    let rules = crate::rules::generate(&spec_text)?;
    let requests_path = root.join(crate::requests::OUTPUT_PATH);
    let requests = crate::requests::generate(&spec_text)?;
    match mode {
        Mode::Write => {
            std::fs::write(&output_path, &generated)
                .map_err(|e| CodegenError::Io(output_path.clone(), e))?;
            std::fs::write(&contract_path, &contract)
                .map_err(|e| CodegenError::Io(contract_path.clone(), e))?;
            std::fs::write(&rules_path, &rules)
                .map_err(|e| CodegenError::Io(rules_path.clone(), e))?;
            std::fs::write(&requests_path, &requests)
                .map_err(|e| CodegenError::Io(requests_path.clone(), e))?;
            Ok(format!(
                "wrote {OUTPUT_PATH} ({} lines), {}, {RULES_PATH} and {}",
                generated.lines().count(),
                crate::contract::OUTPUT_PATH,
                crate::requests::OUTPUT_PATH
            ))
        }
        Mode::Check => {
            check(&generated, &read(&output_path)?, &output_path)?;
            check(&contract, &read(&contract_path)?, &contract_path)?;
            check(&rules, &read(&rules_path)?, &rules_path)?;
            check(&requests, &read(&requests_path)?, &requests_path)?;
            Ok(format!(
                "{OUTPUT_PATH}, {}, {RULES_PATH} and {} are up to date with {SPEC_PATH}",
                crate::contract::OUTPUT_PATH,
                crate::requests::OUTPUT_PATH
            ))
        }
    }
}

/// Compares freshly generated text with the checked-in text.
pub fn check(generated: &str, checked_in: &str, path: &Path) -> Result<(), CodegenError> {
    if generated == checked_in {
        return Ok(());
    }
    let line = generated
        .lines()
        .zip(checked_in.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| generated.lines().count().min(checked_in.lines().count()))
        + 1;
    Err(CodegenError::Drift {
        path: path.to_path_buf(),
        line,
    })
}

/// Generates the formatted Rust source of the raw client from the spec's YAML text.
pub fn generate(spec_text: &str) -> Result<String, CodegenError> {
    let spec: openapiv3::OpenAPI =
        serde_norway::from_str(spec_text).map_err(|e| CodegenError::Spec(e.to_string()))?;
    let mut settings = GenerationSettings::new();
    settings
        // Only its `types` module is kept (`keep_types_only`); the interface style is irrelevant.
        .with_interface(InterfaceStyle::Positional)
        .with_tag(TagStyle::Merged)
        .with_derive("PartialEq")
        // Deterministic key order (the list envelope's `query.filter`/`query.sort` echo) for snapshots.
        .with_map_type("::std::collections::BTreeMap");
    // Schemas whose value set can grow within the API version (`crate::open_enum`) are replaced by the
    // open enums of the contract module: typify alone would make closed enums that fail a whole response
    // on one new value (or, for the `anyOf` spelling, not decode even the known values).
    for name in crate::contract::open_enum_names(spec_text)? {
        settings.with_replacement(
            &name,
            format!("crate::open::{name}"),
            [TypeImpl::Display, TypeImpl::FromStr].into_iter(),
        );
    }
    // Money fields are `allOf: [$ref: Money]` in the spec, so they become decimals rounded to cents.
    settings.with_replacement(
        "Money",
        "crate::money::Money",
        [TypeImpl::Display, TypeImpl::FromStr].into_iter(),
    );
    // Their only required field is the `id` string, so `Default` is honest; with `seal_types`' `new(id)`
    // it is a way to start a value that a field added to the spec does not break.
    let mut with_default = TypePatch::default();
    with_default.with_derive("Default");
    for name in ["Order", "OrderLineItem", "Product", "ProductVariant"] {
        settings.with_patch(name, &with_default);
    }
    // progenitor panics (rather than erroring) on some unsupported shapes; turn that into an error.
    let tokens = std::panic::catch_unwind(move || Generator::new(&settings).generate_tokens(&spec))
        .map_err(|_| CodegenError::Generate("the generator panicked".into()))?
        .map_err(|e| CodegenError::Generate(e.to_string()))?;
    let mut file: syn::File =
        syn::parse2(tokens).map_err(|e| CodegenError::Generate(e.to_string()))?;
    keep_types_only(&mut file);
    derive_json_schema(&mut file);
    seal_types(&mut file)?;
    generated_file(&line_doc_comments(&prettyplease::unparse(&file)))
}

/// Generates the formatted contract module (`crate::contract::OUTPUT_PATH`) from the spec's YAML text:
/// its facts, then the answers each operation declares (`crate::shapes`).
pub fn generate_contract(spec_text: &str) -> Result<String, CodegenError> {
    let mut code = crate::contract::generate(spec_text)?;
    code.push('\n');
    code.push_str(&crate::shapes::generate(spec_text)?);
    generated_file(&code)
}

/// Keeps the `types` module alone: progenitor's client (positional calls of up to nine arguments,
/// hooks, its own error type) is not generated into the crate. The requests come from
/// [`crate::requests`], whoever sends them; the wire types need only serde.
fn keep_types_only(file: &mut syn::File) {
    file.items
        .retain(|item| matches!(item, syn::Item::Mod(module) if module.ident == "types"));
}

/// Gives every serde type of the `types` module `#[cfg_attr(feature = "schemars",
/// derive(::schemars::JsonSchema))]`: a JSON Schema derived from the very types that encode and decode
/// the bodies cannot drift from them, and the SDK's default build does not compile schemars. The
/// replacement types (`crate::open::*`, `crate::money::Money`) implement `JsonSchema` by hand.
fn derive_json_schema(file: &mut syn::File) {
    let Some(types) = file.items.iter_mut().find_map(|item| match item {
        syn::Item::Mod(module) if module.ident == "types" => module.content.as_mut(),
        _ => None,
    }) else {
        return;
    };
    let attribute: syn::Attribute =
        syn::parse_quote!(#[cfg_attr(feature = "schemars", derive(::schemars::JsonSchema))]);
    for item in &mut types.1 {
        let attrs = match item {
            syn::Item::Struct(i) => &mut i.attrs,
            syn::Item::Enum(i) => &mut i.attrs,
            _ => continue,
        };
        // Only the wire types: they derive serde's `Serialize` (helpers such as `ConversionError` do not).
        let Some(derive) = attrs.iter().position(derives_serialize) else {
            continue;
        };
        attrs.insert(derive + 1, attribute.clone());
    }
}

/// Whether `attribute` is a `#[derive(..)]` that lists serde's `Serialize`.
fn derives_serialize(attribute: &syn::Attribute) -> bool {
    let mut found = false;
    if attribute.path().is_ident("derive") {
        // A derive list that does not parse as paths has no `Serialize` worth finding.
        let _ = attribute.parse_nested_meta(|meta| {
            found |= meta
                .path
                .segments
                .last()
                .is_some_and(|segment| segment.ident == "Serialize");
            Ok(())
        });
    }
    found
}

/// Marks every struct with named fields of the `types` module (request, response and webhook bodies)
/// `#[non_exhaustive]` and gives each a generated `new(required fields…)`, so that a new optional field
/// in the spec is not a breaking change: code outside the raw crate cannot write struct literals (which
/// would stop compiling on any new field), and the constructor's parameters are the required fields
/// alone. Optional fields start unset (`None`, empty, or the spec's `default`) and are set through their
/// public fields; that is also how a dependent builds a response value in its tests.
fn seal_types(file: &mut syn::File) -> Result<(), CodegenError> {
    let Some((_, items)) = file.items.iter_mut().find_map(|item| match item {
        syn::Item::Mod(module) if module.ident == "types" => module.content.as_mut(),
        _ => None,
    }) else {
        return Err(CodegenError::Generate("no `types` module".into()));
    };
    // Enums (open enums, unions) and string newtypes among them stay as they are: they have no fields to add.
    let mut sealed = Vec::new();
    for item in items.iter_mut() {
        let syn::Item::Struct(strukt) = item else {
            continue;
        };
        let syn::Fields::Named(fields) = &strukt.fields else {
            continue;
        };
        strukt.attrs.push(syn::parse_quote!(#[non_exhaustive]));
        let mut required: Vec<syn::Field> = Vec::new();
        let mut initializers: Vec<syn::FieldValue> = Vec::new();
        for field in &fields.named {
            let name = field.ident.clone().ok_or_else(|| {
                CodegenError::Generate(format!("{}: a named field without a name", strukt.ident))
            })?;
            match unset_value(field)? {
                Some(value) => initializers.push(syn::parse_quote!(#name: #value)),
                None => {
                    let ty = &field.ty;
                    let docs = field.attrs.iter().filter(|a| a.path().is_ident("doc"));
                    required.push(syn::parse_quote!(#(#docs)* pub #name: #ty));
                    initializers.push(syn::parse_quote!(#name));
                }
            }
        }
        let ident = &strukt.ident;
        let names: Vec<&syn::Ident> = required.iter().filter_map(|f| f.ident.as_ref()).collect();
        if required.len() <= 3 {
            let parameters: Vec<syn::FnArg> = required
                .iter()
                .map(|f| {
                    let (name, ty) = (&f.ident, &f.ty);
                    syn::parse_quote!(#name: #ty)
                })
                .collect();
            let doc = " From the required fields; the optional ones start unset (`None`, empty, or the spec's default) and are set through their public fields.";
            sealed.push(syn::Item::Impl(syn::parse_quote! {
                impl #ident {
                    #[doc = #doc]
                    pub fn new(#(#parameters),*) -> Self {
                        Self { #(#initializers),* }
                    }
                }
            }));
        } else {
            // More than three required fields: named, in a struct of their own, rather than a
            // constructor of four or more positional arguments. Not `#[non_exhaustive]`: it is
            // written as a literal, and a new required field (a breaking change of the API) breaks it.
            let holder = syn::Ident::new(&format!("{ident}Required"), ident.span());
            let holder_doc = format!(" The required fields of [`{ident}`], for [`{ident}::new`].");
            sealed.push(syn::parse_quote! {
                #[doc = #holder_doc]
                #[derive(Clone, Debug, PartialEq)]
                pub struct #holder {
                    #(#required),*
                }
            });
            let doc = " From its required fields; the optional ones start unset (`None`, empty, or the spec's default) and are set through their public fields.";
            sealed.push(syn::Item::Impl(syn::parse_quote! {
                impl #ident {
                    #[doc = #doc]
                    pub fn new(required: #holder) -> Self {
                        let #holder { #(#names),* } = required;
                        Self { #(#initializers),* }
                    }
                }
            }));
        }
    }
    items.extend(sealed);
    Ok(())
}

/// The value an optional field of a request struct starts with: `None` for an `Option`, the serde
/// default for a field that has one, `None` (the field is required) otherwise.
fn unset_value(field: &syn::Field) -> Result<Option<syn::Expr>, CodegenError> {
    if let syn::Type::Path(path) = &field.ty
        && path
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "Option")
    {
        return Ok(Some(syn::parse_quote!(::std::option::Option::None)));
    }
    let mut value = None;
    for attribute in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attribute
            .parse_nested_meta(|meta| {
                if meta.path.is_ident("default") {
                    value = Some(if meta.input.peek(syn::Token![=]) {
                        let function: syn::LitStr = meta.value()?.parse()?;
                        let function: syn::Path = function.parse()?;
                        syn::parse_quote!(#function())
                    } else {
                        syn::parse_quote!(::std::default::Default::default())
                    });
                } else if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                Ok(())
            })
            .map_err(|e| CodegenError::Generate(format!("serde attribute: {e}")))?;
    }
    Ok(value)
}

/// Rewrites prettyplease's `/** ... */` doc blocks as `///` lines.
///
/// In a block, every line after the first keeps the item's indentation while the first has none, so
/// rustdoc sees the rest of a multi-line spec description as an indented code block and tries to run
/// it as a doctest. Line comments with the indentation removed say the same thing as prose.
pub fn line_doc_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        let Some(first) = trimmed
            .strip_prefix("/**")
            .filter(|_| !trimmed.starts_with("/***"))
        else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let indent = &line[..line.len() - trimmed.len()];
        let mut body = vec![first.to_owned()];
        if let Some(single) = first.strip_suffix("*/") {
            body = vec![single.to_owned()];
        } else {
            for next in lines.by_ref() {
                let text = next.strip_prefix(indent).unwrap_or(next.trim_start());
                if let Some(last) = text.trim_end().strip_suffix("*/") {
                    if !last.trim().is_empty() {
                        body.push(last.to_owned());
                    }
                    break;
                }
                body.push(text.to_owned());
            }
        }
        while body.last().is_some_and(|l| l.trim().is_empty()) {
            body.pop();
        }
        for text in body {
            let text = text.trim_end();
            if text.is_empty() {
                out.push_str(&format!("{indent}///\n"));
            } else {
                out.push_str(&format!("{indent}/// {text}\n"));
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod seal_tests {
    use super::*;

    /// The line of `generate`'s output that opens `impl <name>`'s constructor, with its parameters.
    fn constructor(code: &str, name: &str) -> String {
        let start = code
            .find(&format!("impl {name} {{"))
            .expect("a constructor");
        let signature = &code[start..];
        let end = signature.find(") -> Self").expect("a signature");
        signature[..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn a_new_optional_request_field_keeps_the_constructor_and_a_required_one_changes_it() {
        let spec = std::fs::read_to_string(crate::workspace_root().join(SPEC_PATH)).unwrap();
        let before = generate(&spec).unwrap();
        assert!(before.contains("#[non_exhaustive]\n    pub struct CreateOrderRequest {"));
        // Response types too: a dependent builds them with `new(required…)` and field assignment.
        assert!(before.contains("#[non_exhaustive]\n    pub struct Order {"));
        assert!(before.contains("#[non_exhaustive]\n    pub struct WebhookEvent {"));

        let property = "      properties:\n        externalOrderId:\n";
        let with_note = "      properties:\n        giftNote:\n          type: string\n        externalOrderId:\n";
        let optional = spec.replacen(property, with_note, 1);
        assert_ne!(optional, spec);
        let after = generate(&optional).unwrap();
        assert!(after.contains("pub gift_note: ::std::option::Option<::std::string::String>"));
        assert_eq!(
            constructor(&after, "CreateOrderRequest"),
            constructor(&before, "CreateOrderRequest")
        );

        let required = optional.replacen(
            "required: [lineItems, shippingAddress]",
            "required: [lineItems, shippingAddress, giftNote]",
            1,
        );
        let changed = constructor(&generate(&required).unwrap(), "CreateOrderRequest");
        assert!(
            changed.contains("gift_note: ::std::string::String"),
            "{changed}"
        );
    }
}
