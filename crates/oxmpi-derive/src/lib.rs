//! `#[derive(Equivalence)]` for oxmpi: gives a struct whose fields all implement
//! `oxmpi::datatype::Equivalence` an MPI datatype of its own.
//!
//! The datatype is an `MPI_Type_create_struct` of the fields at their offsets
//! (`core::mem::offset_of!`), resized to `size_of::<Self>()` so that padding and
//! arrays of the struct are handled; it is built and committed once, on first use, and
//! cached in a `static`. As rsmpi's, building it panics before MPI is initialized,
//! after it is finalized, and off the main thread below `Threading::Multiple`. Fields may be primitives, arrays `[T; N]` of equivalent types,
//! or other derived structs; named and tuple structs are supported, generic ones are not.
//!
//! The generated code names the `oxmpi` crate as `::oxmpi`, or by the name the
//! depending crate's `Cargo.toml` gives it (`mpi = { package = "oxmpi", ... }`).

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;
use syn::{parse_macro_input, Data, DeriveInput, Fields, Ident, Index};

/// Derives `Equivalence` for a struct of equivalent fields.
#[proc_macro_derive(Equivalence)]
pub fn derive_equivalence(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The path of the oxmpi crate from the crate being compiled.
fn crate_path() -> TokenStream2 {
    let name = std::env::var("CARGO_MANIFEST_DIR")
        .ok()
        .and_then(|dir| std::fs::read_to_string(std::path::Path::new(&dir).join("Cargo.toml")).ok())
        .and_then(|toml| renamed(&toml));
    let name = name.unwrap_or_else(|| "oxmpi".to_string());
    let id = Ident::new(&name.replace('-', "_"), Span::call_site());
    quote!(::#id)
}

/// The key of a dependency line `key = { ... package = "oxmpi" ... }`, if any.
fn renamed(toml: &str) -> Option<String> {
    for line in toml.lines() {
        let line = line.trim();
        let Some((key, rest)) = line.split_once('=') else {
            continue;
        };
        let rest: String = rest.chars().filter(|c| !c.is_whitespace()).collect();
        if rest.starts_with('{') && rest.contains("package=\"oxmpi\"") {
            let key = key.trim().trim_matches('"');
            if !key.is_empty() {
                return Some(key.to_string());
            }
        }
    }
    None
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let name = &input.ident;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "#[derive(Equivalence)] does not support generic structs; implement Equivalence by hand",
        ));
    }
    let fields = match &input.data {
        Data::Struct(s) => &s.fields,
        _ => {
            return Err(syn::Error::new_spanned(
                name,
                "#[derive(Equivalence)] supports structs only",
            ))
        }
    };
    let (tys, members): (Vec<_>, Vec<TokenStream2>) = match fields {
        Fields::Named(f) => f
            .named
            .iter()
            .map(|f| {
                let id = f.ident.as_ref().expect("named field");
                (&f.ty, quote!(#id))
            })
            .unzip(),
        Fields::Unnamed(f) => f
            .unnamed
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let i = Index::from(i);
                (&f.ty, quote!(#i))
            })
            .unzip(),
        Fields::Unit => (Vec::new(), Vec::new()),
    };
    let krate = crate_path();
    let n = tys.len();
    let vars: Vec<Ident> = (0..n)
        .map(|i| Ident::new(&format!("__field_dt_{i}"), Span::call_site()))
        .collect();
    Ok(quote! {
        // SAFETY: the datatype lists every field at its offset with the field's own
        // (Equivalence) datatype, and its extent is the size of the struct.
        unsafe impl #krate::datatype::Equivalence for #name {
            type Out = #krate::datatype::DatatypeRef<'static>;
            fn equivalent_datatype() -> Self::Out {
                static __DT: #krate::datatype::derive_support::OnceLock<#krate::datatype::UserDatatype> =
                    #krate::datatype::derive_support::OnceLock::new();
                __DT.get_or_init(|| {
                    #krate::datatype::derive_support::check_datatype_creation(::core::stringify!(#name));
                    #( let #vars = <#tys as #krate::datatype::derive_support::FieldDatatype>::field_datatype(); )*
                    let __types: [#krate::datatype::DatatypeRef<'_>; #n] =
                        [ #( #krate::datatype::Datatype::as_datatype_ref(&#vars) ),* ];
                    let __displs: [#krate::Address; #n] =
                        [ #( ::core::mem::offset_of!(#name, #members) as #krate::Address ),* ];
                    let __blocks: [#krate::Count; #n] = [1; #n];
                    let __st = #krate::datatype::UserDatatype::structured(&__blocks, &__displs, &__types);
                    #krate::datatype::UserDatatype::resized(
                        &__st,
                        0,
                        ::core::mem::size_of::<#name>() as #krate::Address,
                    )
                })
                .as_ref()
            }
        }
    })
}
