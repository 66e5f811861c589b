//! The generator shared by `build.rs` (Rust constants and the `MPI_x` -> `PMPI_x`
//! shims) and `cargo xtask dist` (`include/mpi.h`). Both read `abi.txt`, the one
//! description of oxmpi's C ABI, so header and library cannot drift apart: every
//! function the header declares gets a generated `MPI_x` shim that calls the
//! hand-written `PMPI_x`, and a missing or differently typed `PMPI_x` is a
//! compile error.
#![allow(dead_code)]

pub struct Const {
    pub name: String,
    pub ctype: String,
    pub value: String,
    pub ext: bool,
}

pub struct Param {
    pub name: String,
    pub ctype: String,
    pub rust: String,
}

pub struct Func {
    pub ret: String,
    pub name: String,
    pub params: Vec<Param>,
    pub proto_params: String,
    pub ext: bool,
    /// For `unsup AREA PROTOTYPE` lines: the area oxmpi does not implement
    /// (`rma`, `io`); the generated `PMPI_x` raises MPI_ERR_UNSUPPORTED_OPERATION.
    pub unsup: Option<String>,
    /// For `varfn` lines: the C prototype ends in `, ...`. The header declares it
    /// so; the library defines it with the named parameters only (see abi.txt).
    pub variadic: bool,
}

pub struct Abi {
    pub types: Vec<String>,
    pub consts: Vec<Const>,
    pub funcs: Vec<Func>,
}

pub fn parse(text: &str) -> Abi {
    let mut abi = Abi { types: vec![], consts: vec![], funcs: vec![] };
    for (no, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (kw, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        match kw {
            "type" => abi.types.push(rest.to_string()),
            "const" | "ext" => {
                let f: Vec<&str> = rest.split_whitespace().collect();
                assert!(f.len() == 3, "abi.txt:{}: want NAME CTYPE VALUE", no + 1);
                abi.consts.push(Const { name: f[0].into(), ctype: f[1].into(), value: f[2].into(), ext: kw == "ext" });
            }
            "fn" | "extfn" => abi.funcs.push(parse_fn(rest, kw == "extfn", no + 1)),
            "varfn" => {
                let proto = rest.trim_end_matches(';');
                let named = proto
                    .strip_suffix(')')
                    .and_then(|p| p.trim_end().strip_suffix("..."))
                    .and_then(|p| p.trim_end().strip_suffix(','))
                    .unwrap_or_else(|| panic!("abi.txt:{}: a varfn prototype ends in `, ...)`", no + 1));
                let mut f = parse_fn(&format!("{named})"), false, no + 1);
                f.proto_params = proto[proto.find('(').unwrap() + 1..proto.len() - 1].trim().to_string();
                f.variadic = true;
                abi.funcs.push(f);
            }
            "unsup" => {
                let (area, proto) = rest.split_once(char::is_whitespace).unwrap_or_else(|| panic!("abi.txt:{}: want AREA PROTOTYPE", no + 1));
                let mut f = parse_fn(proto.trim(), false, no + 1);
                f.unsup = Some(area.to_string());
                abi.funcs.push(f);
            }
            _ => panic!("abi.txt:{}: unknown line kind `{kw}`", no + 1),
        }
    }
    abi
}

fn parse_fn(s: &str, ext: bool, line: usize) -> Func {
    let s = s.trim_end_matches(';');
    let open = s.find('(').unwrap_or_else(|| panic!("abi.txt:{line}: no `(`"));
    let head = s[..open].trim();
    let params_s = s[open + 1..s.rfind(')').expect("no `)`")].trim();
    let name_at = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
    let name = head[name_at..].to_string();
    let ret = head[..name_at].trim().to_string();
    let mut params = vec![];
    if params_s != "void" && !params_s.is_empty() {
        for p in params_s.split(',') {
            let p = p.trim();
            // `int ranges[][3]` (MPI_Group_range_incl) is a pointer at the ABI level.
            let p = p.strip_suffix("[3]").unwrap_or(p);
            let (p, brackets) = match p.strip_suffix("[]") {
                Some(q) => (q.trim(), 1),
                None => (p, 0),
            };
            let at = p.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
            let pname = p[at..].to_string();
            let ty = p[..at].trim();
            assert!(!pname.is_empty() && !ty.is_empty(), "abi.txt:{line}: parameter `{p}` needs a type and a name");
            let stars = ty.matches('*').count() + brackets;
            let is_const = ty.starts_with("const ");
            let base = ty.trim_start_matches("const ").replace('*', "").trim().to_string();
            let ctype = format!("{ty}{}", if brackets == 1 { " *" } else { "" });
            params.push(Param { name: pname, rust: rust_type(&base, stars, is_const), ctype });
        }
    }
    Func { ret, name, params, proto_params: params_s.to_string(), ext, unsup: None, variadic: false }
}

fn rust_base(base: &str) -> String {
    match base {
        "int" | "MPI_Fint" => "c_int".into(),
        "void" => "c_void".into(),
        "char" => "c_char".into(),
        "double" => "f64".into(),
        "MPI_Aint" => "MPI_Aint".into(),
        "MPI_Count" | "MPI_Offset" => "i64".into(),
        b if b.starts_with("MPI_") => b.into(),
        b => panic!("abi.txt: no Rust type for C type `{b}`"),
    }
}

fn rust_type(base: &str, stars: usize, is_const: bool) -> String {
    if base.ends_with("_function") || base.ends_with("_function_c") {
        assert!(stars == 1, "function pointer parameters must be `T_function *` (or `T_function_c *`)");
        return format!("Option<{base}>");
    }
    let mut t = rust_base(base);
    for i in 0..stars {
        t = format!("*{} {t}", if i == 0 && is_const { "const" } else { "mut" });
    }
    t
}

fn rust_ret(ret: &str) -> String {
    match ret {
        "int" | "MPI_Fint" => "c_int".into(),
        "double" => "f64".into(),
        "MPI_Aint" => "MPI_Aint".into(),
        r if r.starts_with("MPI_") => r.into(),
        r => panic!("abi.txt: no Rust type for return type `{r}`"),
    }
}

fn is_handle_type(t: &str) -> bool {
    matches!(
        t,
        "MPI_Comm" | "MPI_Datatype" | "MPI_Op" | "MPI_Group" | "MPI_Request" | "MPI_Errhandler" | "MPI_Info"
            | "MPI_Message" | "MPI_Win" | "MPI_File" | "MPI_Session"
    )
}

/// `mpi.h`.
pub fn header(abi: &Abi) -> String {
    let mut h = String::new();
    h.push_str("/* mpi.h for oxmpi: the MPI-5.0 standard ABI (MPI_ABI_VERSION 1.0) plus oxmpi extensions.\n");
    h.push_str(" * Generated from crates/oxmpi-capi/abi.txt by `cargo xtask dist`; do not edit. */\n");
    h.push_str("#ifndef OXMPI_MPI_H\n#define OXMPI_MPI_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n");
    h.push_str("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n#define OXMPI 1\n\n");
    for t in &abi.types {
        h.push_str(t);
        h.push('\n');
    }
    h.push('\n');
    let mut in_ext = false;
    for c in &abi.consts {
        if c.ext && !in_ext {
            h.push_str("\n/* oxmpi extensions: names MPI-3 removed and MPIX_ names, with values the standard table leaves unused. */\n");
            in_ext = true;
        }
        let v = &c.value;
        let def = match c.ctype.as_str() {
            "int" if v.starts_with('-') => format!("({v})"),
            "int" => v.clone(),
            "alias" => v.clone(),
            "MPI_Offset" => format!("((MPI_Offset){v})"),
            t if t.ends_with('*') => format!("(({t})(intptr_t){v})"),
            t if is_handle_type(t) => format!("(({t})(intptr_t){v})"),
            t => panic!("abi.txt: constant {} has unknown type {t}", c.name),
        };
        h.push_str(&format!("#define {} {}\n", c.name, def));
    }
    h.push('\n');
    for f in &abi.funcs {
        h.push_str(&format!("{} {}({});\n", f.ret, f.name, if f.proto_params.is_empty() { "void" } else { &f.proto_params }));
    }
    h.push('\n');
    for f in &abi.funcs {
        h.push_str(&format!("{} P{}({});\n", f.ret, f.name, if f.proto_params.is_empty() { "void" } else { &f.proto_params }));
    }
    h.push_str("\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* OXMPI_MPI_H */\n");
    h
}

/// Rust constants for the library: handle values as `usize`, ints as `c_int`.
pub fn rust_consts(abi: &Abi) -> String {
    let mut r = String::from("// Generated from abi.txt by build.rs.\n");
    for c in &abi.consts {
        let (ty, v) = match c.ctype.as_str() {
            "int" => ("c_int", c.value.clone()),
            "alias" => ("usize", c.value.clone()),
            "MPI_Offset" => ("i64", c.value.clone()),
            _ => ("usize", c.value.clone()),
        };
        r.push_str(&format!("pub const {}: {ty} = {v};\n", c.name));
    }
    r.push_str("pub const ERROR_CLASS_NAMES: &[(c_int, &str)] = &[\n");
    for c in &abi.consts {
        if c.ctype == "int" && (c.name.starts_with("MPI_ERR_") || c.name == "MPI_SUCCESS") && c.name != "MPI_ERR_LASTCODE" {
            r.push_str(&format!("    ({}, \"{}\"),\n", c.value, c.name));
        }
    }
    r.push_str("];\n");
    r.push_str("pub const FUNCTIONS: &[&str] = &[\n");
    for f in &abi.funcs {
        r.push_str(&format!("    \"{}\",\n", f.name));
    }
    r.push_str("];\n");
    r
}

/// `MPI_x` shims calling the hand-written `PMPI_x` (so a tool's own `MPI_x` can
/// call `PMPI_x`).
pub fn rust_shims(abi: &Abi) -> String {
    let mut r = String::from("// Generated from abi.txt by build.rs.\n");
    for f in &abi.funcs {
        let params: Vec<String> = f.params.iter().map(|p| format!("{}: {}", p.name, p.rust)).collect();
        let args: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
        r.push_str(&format!(
            "#[no_mangle]\npub unsafe extern \"C\" fn {}({}) -> {} {{\n    // SAFETY: same contract as the PMPI twin.\n    unsafe {{ crate::pmpi::P{}({}) }}\n}}\n",
            f.name,
            params.join(", "),
            rust_ret(&f.ret),
            f.name,
            args.join(", ")
        ));
    }
    r
}

/// What an `unsup` area is, for the error message.
fn area_text(area: &str) -> &'static str {
    match area {
        "rma" => "one-sided communication (RMA windows)",
        "io" => "MPI-IO (files)",
        "dynamic" => "dynamic process management (spawn, ports, connect/accept)",
        "session" => "MPI-4 sessions",
        "tools" => "the MPI tool information interface (MPI_T)",
        a => panic!("abi.txt: unknown unsupported area `{a}`"),
    }
}

/// The `PMPI_x` bodies of the `unsup` functions: each raises
/// MPI_ERR_UNSUPPORTED_OPERATION naming the call, through the error handler of
/// its `comm` argument if it has one (else as a call tied to no communicator).
pub fn rust_unsupported(abi: &Abi) -> String {
    let mut r = String::from("// Generated from abi.txt by build.rs.\n");
    for f in abi.funcs.iter().filter(|f| f.unsup.is_some()) {
        let area = area_text(f.unsup.as_deref().unwrap());
        let comm = f.params.iter().find(|p| p.ctype == "MPI_Comm" && p.name == "comm");
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| if comm.is_some_and(|c| c.name == p.name) { format!("{}: {}", p.name, p.rust) } else { format!("_{}: {}", p.name, p.rust) })
            .collect();
        assert_eq!(f.ret, "int", "abi.txt: unsupported function {} must return int", f.name);
        r.push_str(&format!(
            "#[no_mangle]\npub unsafe extern \"C\" fn P{}({}) -> c_int {{\n    crate::errors::unsupported(\"{}\", {}, \"{}\")\n}}\n",
            f.name,
            params.join(", "),
            f.name,
            if comm.is_some() { "comm" } else { "crate::errors::NO_COMM" },
            area
        ));
    }
    r
}
