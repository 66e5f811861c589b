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
    /// Declared as an array (`int x[]`, `int ranges[][3]`: 3), not as a pointer.
    pub array: usize,
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
    /// For `query` lines: a call whose last parameter is its one OUT scalar. The
    /// library's `PMPI_x` is generated (`rust_queries`): it checks the OUT pointer
    /// (NULL: MPI_ERR_ARG naming the call and the argument) and stores what the
    /// hand-written `crate::pmpi::x(call, inputs...) -> R<T>` answers.
    pub query: bool,
    /// For `query` lines: how many trailing parameters are OUT scalars (the trailing
    /// run of non-const `T *name`); the area's `x` answers a tuple when more than one.
    pub outs: usize,
    /// For `query` lines: the count parameters of the `count(NAME, ...)` annotation
    /// after the prototype: negative is MPI_ERR_COUNT naming the call and argument,
    /// and the area's `x` gets them as `usize`.
    pub counts: Vec<String>,
    /// For `query` lines marked `outfirst` (constructors, mostly: the answer makes a
    /// handle or an error code): the generated `PMPI_x` checks the OUT pointers before
    /// the answer runs (a NULL OUT is MPI_ERR_ARG with nothing made), not after, and
    /// an `MPI_Comm` OUT holds MPI_COMM_NULL while it runs (a failing communicator
    /// constructor leaves the null handle, MPI-4.1).
    pub outs_first: bool,
    /// For `fn` lines annotated `out(NAME, ...)` after the prototype: the OUT pointers
    /// the generated `PMPI_x` (`rust_checked`) checks before anything else runs (NULL:
    /// MPI_ERR_ARG naming the call and the argument, through the handler of the call's
    /// file, session or communicator, as for `query` lines); it then calls the area's
    /// hand-written `x(call, params...)` with each of them as a `&mut T`.
    pub checked_outs: Vec<String>,
    /// For `fn` lines annotated `nonnull(NAME, ...)`: pointers the call requires (strings,
    /// name buffers, IN arrays): the generated `PMPI_x` rejects NULL (MPI_ERR_ARG naming
    /// the call and the argument) and passes them on unchanged. All checks of a line run
    /// in parameter order, before the area's body.
    pub nonnull: Vec<String>,
    /// For `fn` lines annotated `status(NAME)`: an OUT `MPI_Status *` that may be
    /// MPI_STATUS_IGNORE (NULL); the area's body gets it as `Option<&mut MPI_Status>`.
    pub statuses: Vec<String>,
    /// For `fn` lines annotated `array(NAME, LEN)`: an array parameter of `LEN`
    /// elements (`LEN` an integer parameter of the call): a negative `LEN` is
    /// MPI_ERR_COUNT naming `LEN`, a NULL `NAME` with `LEN > 0` MPI_ERR_ARG naming
    /// `NAME` (with `LEN` 0 it is not looked at); the area's body gets a `&[T]`
    /// (`&mut [T]` for a non-const pointer). Pairs `(NAME, LEN)`.
    pub arrays: Vec<(String, String)>,
    /// For `fn` lines annotated `lenquery(NAME, LEN)`: a buffer pointer that may be
    /// NULL when the OUT length `LEN` (an `out(LEN)` checked before it) holds 0 or
    /// less, the length query; otherwise NULL is MPI_ERR_ARG naming `NAME`. Passed on
    /// unchanged. Pairs `(NAME, LEN)`.
    pub lenqueries: Vec<(String, String)>,
    /// For `fn` lines annotated `made(NAME)`: a constructor's OUT handle, checked as
    /// `out(NAME)` but before every other check, and then set to its type's null
    /// handle, so that a failing constructor (a bad array, count or handle) leaves
    /// the null handle (MPI-4.1). Also in `checked_outs`.
    pub made: Vec<String>,
    /// For `fn` lines annotated `outaddr(NAME)`: a `void *` parameter MPI defines as the
    /// address of a pointer the call stores (`baseptr`, `attribute_val`, ...): checked as
    /// `out(NAME)` and given to the body as `&mut *mut c_void`. Also in `checked_outs`.
    pub addr_outs: Vec<String>,
    /// For `fn` lines annotated `route(TO)`: where errors go when the call has no
    /// handle argument to route them by: `file` (the null file's handler, as
    /// MPI_File_open and MPI_File_create_errhandler), `session` (the null session's),
    /// or a predefined communicator (`MPI_COMM_WORLD`, `MPI_COMM_SELF`).
    pub route: Option<String>,
    /// For `fn` lines annotated `hot(BODY, EXTRA...)` (the sends and receives, the
    /// hottest calls: bench/PROFILE.md rate18): the generated `PMPI_x` (`rust_hot`) is the
    /// lean entry `conv::errors::hot` over the area's `BODY_fast((params...), EXTRA...) ->
    /// Option<R<()>>` (the hot case; `None`: not it, nothing done) and its whole body
    /// `BODY(call, (params...), EXTRA...)`, the C parameters as one tuple; the `int` and
    /// `_c` lines share the generic two.
    /// `(BODY, EXTRA...)` as written.
    pub hot: Option<(String, Vec<String>)>,
    /// For `fn` lines annotated `coll(BODY, EXTRA...)` (the collectives in their
    /// blocking, immediate and persistent forms): the generated `PMPI_x` (`rust_coll`)
    /// runs the area's one body of the three, `BODY(params..., form, EXTRA...)`, where
    /// `form` is `Form::Blocking`, `Form::immediate(request)` for a call ending in
    /// `MPI_Request *request`, or `Form::persistent(info, request)` for one ending in
    /// `MPI_Info info, MPI_Request *request`, and `params` the parameters before them.
    pub coll: Option<(String, Vec<String>)>,
    /// For `coll` lines annotated `empty(CHECK, ARG...)` after `coll(...)`: the 0-count
    /// exit. The generated `PMPI_x` asks `crate::coll::empty::CHECK(ARG...)` (the named
    /// parameters, in that order) first, through `crate::coll::entry`: a call that moves
    /// nothing on any rank returns there (the immediate form with a complete request),
    /// before the area's general body. `(CHECK, ARGS)` as written.
    pub empty: Option<(String, Vec<String>)>,
}

pub struct Abi {
    pub types: Vec<String>,
    pub consts: Vec<Const>,
    pub funcs: Vec<Func>,
}

pub fn parse(text: &str) -> Abi {
    let mut abi = Abi {
        types: vec![],
        consts: vec![],
        funcs: vec![],
    };
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
                abi.consts.push(Const {
                    name: f[0].into(),
                    ctype: f[1].into(),
                    value: f[2].into(),
                    ext: kw == "ext",
                });
            }
            "fn" | "extfn" => {
                let close = rest
                    .find(')')
                    .unwrap_or_else(|| panic!("abi.txt:{}: no `)`", no + 1));
                let (proto, notes) = (&rest[..=close], rest[close + 1..].trim());
                let mut f = parse_fn(proto, kw == "extfn", no + 1);
                // `coll(...) empty(CHECK, ARG...)`: the 0-count exit, split off first.
                let (mut notes, empty) = match notes.split_once(" empty(") {
                    Some((n, e)) => {
                        let e = e.strip_suffix(')').unwrap_or_else(|| {
                            panic!("abi.txt:{}: want empty(CHECK, ARG...) last", no + 1)
                        });
                        let mut it = e.split(',').map(|a| a.trim().to_string());
                        let check = it.next().unwrap_or_default();
                        let args: Vec<String> = it.collect();
                        assert!(
                            !check.is_empty()
                                && args.iter().all(|a| f.params.iter().any(|p| &p.name == a)),
                            "abi.txt:{}: empty(CHECK, ARG...) names parameters of the call",
                            no + 1
                        );
                        (n.trim(), Some((check, args)))
                    }
                    None => (notes, None),
                };
                for kind in ["hot", "coll"] {
                    let Some(list) = notes
                        .strip_prefix(kind)
                        .and_then(|n| n.strip_prefix('('))
                        .and_then(|n| n.strip_suffix(')'))
                    else {
                        continue;
                    };
                    let mut it = list.split(',').map(|a| a.trim().to_string());
                    let body = it.next().filter(|b| !b.is_empty()).unwrap_or_else(|| {
                        panic!("abi.txt:{}: want {kind}(BODY, EXTRA...)", no + 1)
                    });
                    assert!(
                        f.ret == "int" && f.params.iter().any(|p| p.ctype == "MPI_Comm"),
                        "abi.txt:{}: a {kind} fn returns int and has an MPI_Comm parameter",
                        no + 1
                    );
                    let v = Some((body, it.collect()));
                    if kind == "hot" {
                        f.hot = v;
                    } else {
                        f.coll = v;
                    }
                    notes = "";
                }
                assert!(
                    empty.is_none() || f.coll.is_some(),
                    "abi.txt:{}: empty(...) follows a coll(...) annotation",
                    no + 1
                );
                f.empty = empty;
                while !notes.is_empty() {
                    let (kind, list, rest) = notes
                        .split_once('(')
                        .and_then(|(k, r)| r.split_once(')').map(|(l, rest)| (k.trim(), l, rest)))
                        .filter(|(k, _, _)| {
                            ["out", "nonnull", "status", "array", "lenquery", "made", "outaddr", "route"].contains(k)
                        })
                        .unwrap_or_else(|| {
                            panic!(
                                "abi.txt:{}: after a fn's prototype only `out(NAME, ...)`, `nonnull(NAME, ...)`, `status(NAME)`, `array(NAME, LEN)`, `lenquery(NAME, LEN)`, `made(NAME)`, `outaddr(NAME)`, `route(TO)`",
                                no + 1
                            )
                        });
                    notes = rest.trim();
                    if kind == "route" {
                        let to = list.trim();
                        assert!(
                            ["file", "session", "MPI_COMM_WORLD", "MPI_COMM_SELF"].contains(&to),
                            "abi.txt:{}: route(file | session | MPI_COMM_WORLD | MPI_COMM_SELF)",
                            no + 1
                        );
                        f.route = Some(to.to_string());
                        continue;
                    }
                    if kind == "array" || kind == "lenquery" {
                        let (n, len) = list
                            .split_once(',')
                            .map(|(a, b)| (a.trim(), b.trim()))
                            .unwrap_or_else(|| {
                                panic!("abi.txt:{}: want {kind}(NAME, LEN)", no + 1)
                            });
                        let p = f.params.iter().find(|p| p.name == n);
                        let l = f.params.iter().find(|p| p.name == len);
                        if kind == "array" {
                            assert!(
                                p.is_some_and(
                                    |p| p.rust.starts_with('*') && !p.rust.ends_with("c_void")
                                ),
                                "abi.txt:{}: array `{n}` is not a `T *` or `T []` parameter",
                                no + 1
                            );
                            assert!(
                                l.is_some_and(|l| ["c_int", "i64"].contains(&l.rust.as_str())),
                                "abi.txt:{}: array length `{len}` is not an int or MPI_Count parameter",
                                no + 1
                            );
                            f.arrays.push((n.to_string(), len.to_string()));
                        } else {
                            assert!(
                                p.is_some_and(|p| p.rust.starts_with('*'))
                                    && f.checked_outs.iter().any(|o| o == len),
                                "abi.txt:{}: lenquery(NAME, LEN): NAME a pointer, LEN named in an earlier out(...)",
                                no + 1
                            );
                            f.lenqueries.push((n.to_string(), len.to_string()));
                        }
                        assert!(
                            f.ret == "int",
                            "abi.txt:{}: a checked fn returns int",
                            no + 1
                        );
                        continue;
                    }
                    for n in list.split(',').map(str::trim) {
                        let p = f.params.iter().find(|p| p.name == n);
                        if kind == "outaddr" {
                            assert!(
                                p.is_some_and(|p| p.array == 0 && p.rust == "*mut c_void"),
                                "abi.txt:{}: outaddr `{n}` is not a `void *` parameter",
                                no + 1
                            );
                            f.checked_outs.push(n.to_string());
                            f.addr_outs.push(n.to_string());
                        } else if kind == "made" {
                            assert!(
                                p.is_some_and(|p| p.array == 0
                                    && p.rust.starts_with("*mut MPI_")
                                    && is_handle_type(p.rust.trim_start_matches("*mut "))),
                                "abi.txt:{}: made `{n}` is not a handle OUT parameter",
                                no + 1
                            );
                            f.checked_outs.push(n.to_string());
                            f.made.push(n.to_string());
                        } else if kind == "out" {
                            assert!(
                                p.is_some_and(|p| p.array == 0
                                    && p.rust.starts_with("*mut ")
                                    && p.rust != "*mut c_void"),
                                "abi.txt:{}: out `{n}` is not a `T *` parameter",
                                no + 1
                            );
                            f.checked_outs.push(n.to_string());
                        } else if kind == "status" {
                            assert!(
                                p.is_some_and(|p| p.array == 0 && p.rust == "*mut MPI_Status"),
                                "abi.txt:{}: status `{n}` is not an `MPI_Status *` parameter",
                                no + 1
                            );
                            f.statuses.push(n.to_string());
                        } else {
                            assert!(
                                p.is_some_and(|p| p.rust.starts_with('*')),
                                "abi.txt:{}: nonnull `{n}` is not a pointer parameter",
                                no + 1
                            );
                            f.nonnull.push(n.to_string());
                        }
                    }
                    assert!(
                        f.ret == "int",
                        "abi.txt:{}: a checked fn returns int",
                        no + 1
                    );
                }
                abi.funcs.push(f);
            }
            "query" | "extquery" => {
                let close = rest
                    .find(')')
                    .unwrap_or_else(|| panic!("abi.txt:{}: no `)`", no + 1));
                let (proto, notes) = (&rest[..=close], rest[close + 1..].trim());
                let (notes, outs_first) = match notes.strip_suffix("outfirst") {
                    Some(n) => (n.trim(), true),
                    None => (notes, false),
                };
                let mut f = parse_fn(proto, kw == "extquery", no + 1);
                let is_out = |p: &Param| {
                    p.array == 0
                        && p.rust.starts_with("*mut ")
                        && !p.rust[5..].contains('*')
                        && p.rust != "*mut c_void"
                };
                f.outs = f.params.iter().rev().take_while(|p| is_out(p)).count();
                assert!(
                    f.ret == "int" && f.outs > 0,
                    "abi.txt:{}: a query returns int and ends in OUT scalars (`T *name`)",
                    no + 1
                );
                if !notes.is_empty() {
                    let list = notes
                        .strip_prefix("count(")
                        .and_then(|n| n.strip_suffix(')'))
                        .unwrap_or_else(|| {
                            panic!(
                                "abi.txt:{}: after a query's prototype only `count(NAME, ...)` and `outfirst`",
                                no + 1
                            )
                        });
                    for n in list.split(',').map(str::trim) {
                        let p = f.params[..f.params.len() - f.outs]
                            .iter()
                            .find(|p| p.name == n);
                        assert!(
                            p.is_some_and(|p| p.ctype == "int" || p.ctype == "MPI_Count"),
                            "abi.txt:{}: count `{n}` is not an int or MPI_Count input of the query",
                            no + 1
                        );
                        f.counts.push(n.to_string());
                    }
                }
                f.query = true;
                f.outs_first = outs_first;
                abi.funcs.push(f);
            }
            "varfn" => {
                let proto = rest.trim_end_matches(';');
                let named = proto
                    .strip_suffix(')')
                    .and_then(|p| p.trim_end().strip_suffix("..."))
                    .and_then(|p| p.trim_end().strip_suffix(','))
                    .unwrap_or_else(|| {
                        panic!("abi.txt:{}: a varfn prototype ends in `, ...)`", no + 1)
                    });
                let mut f = parse_fn(&format!("{named})"), false, no + 1);
                f.proto_params = proto[proto.find('(').unwrap() + 1..proto.len() - 1]
                    .trim()
                    .to_string();
                f.variadic = true;
                abi.funcs.push(f);
            }
            "unsup" => {
                let (area, proto) = rest
                    .split_once(char::is_whitespace)
                    .unwrap_or_else(|| panic!("abi.txt:{}: want AREA PROTOTYPE", no + 1));
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
    let open = s
        .find('(')
        .unwrap_or_else(|| panic!("abi.txt:{line}: no `(`"));
    let head = s[..open].trim();
    let params_s = s[open + 1..s.rfind(')').expect("no `)`")].trim();
    let name_at = head
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let name = head[name_at..].to_string();
    let ret = head[..name_at].trim().to_string();
    let mut params = vec![];
    if params_s != "void" && !params_s.is_empty() {
        for p in params_s.split(',') {
            let p = p.trim();
            // `int ranges[][3]` (MPI_Group_range_incl) is a pointer at the ABI level.
            let triple = p.ends_with("[3]");
            let p = p.strip_suffix("[3]").unwrap_or(p);
            let (p, brackets) = match p.strip_suffix("[]") {
                Some(q) => (q.trim(), 1),
                None => (p, 0),
            };
            let at = p
                .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            let pname = p[at..].to_string();
            let ty = p[..at].trim();
            assert!(
                !pname.is_empty() && !ty.is_empty(),
                "abi.txt:{line}: parameter `{p}` needs a type and a name"
            );
            let stars = ty.matches('*').count() + brackets;
            let is_const = ty.starts_with("const ");
            let base = ty
                .trim_start_matches("const ")
                .replace('*', "")
                .trim()
                .to_string();
            let ctype = format!("{ty}{}", if brackets == 1 { " *" } else { "" });
            params.push(Param {
                name: pname,
                rust: rust_type(&base, stars, is_const),
                ctype,
                array: if triple { 3 } else { brackets },
            });
        }
    }
    Func {
        ret,
        name,
        params,
        proto_params: params_s.to_string(),
        ext,
        unsup: None,
        variadic: false,
        query: false,
        outs: 0,
        counts: vec![],
        outs_first: false,
        checked_outs: vec![],
        nonnull: vec![],
        statuses: vec![],
        arrays: vec![],
        lenqueries: vec![],
        made: vec![],
        addr_outs: vec![],
        route: None,
        hot: None,
        coll: None,
        empty: None,
    }
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
        assert!(
            stars == 1,
            "function pointer parameters must be `T_function *` (or `T_function_c *`)"
        );
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
        "MPI_Comm"
            | "MPI_Datatype"
            | "MPI_Op"
            | "MPI_Group"
            | "MPI_Request"
            | "MPI_Errhandler"
            | "MPI_Info"
            | "MPI_Message"
            | "MPI_Win"
            | "MPI_File"
            | "MPI_Session"
    )
}

/// `mpi.h`.
pub fn header(abi: &Abi) -> String {
    let mut h = String::new();
    h.push_str("/* mpi.h for oxmpi: the MPI-5.0 standard ABI (MPI_ABI_VERSION 1.0) plus oxmpi extensions.\n");
    h.push_str(
        " * Generated from crates/oxmpi-capi/abi.txt by `cargo xtask dist`; do not edit. */\n",
    );
    h.push_str(
        "#ifndef OXMPI_MPI_H\n#define OXMPI_MPI_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n",
    );
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
            // The tool interface's handles (MPI_T_enum, ...): pointers like the others.
            t if t.starts_with("MPI_T_") => format!("(({t})(intptr_t){v})"),
            t => panic!("abi.txt: constant {} has unknown type {t}", c.name),
        };
        h.push_str(&format!("#define {} {}\n", c.name, def));
    }
    h.push('\n');
    for f in &abi.funcs {
        h.push_str(&format!(
            "{} {}({});\n",
            f.ret,
            f.name,
            if f.proto_params.is_empty() {
                "void"
            } else {
                &f.proto_params
            }
        ));
    }
    h.push('\n');
    for f in &abi.funcs {
        h.push_str(&format!(
            "{} P{}({});\n",
            f.ret,
            f.name,
            if f.proto_params.is_empty() {
                "void"
            } else {
                &f.proto_params
            }
        ));
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
        if c.ctype == "int"
            && (c.name.starts_with("MPI_ERR_")
                || c.name.starts_with("MPI_T_ERR_")
                || c.name == "MPI_SUCCESS")
            && c.name != "MPI_ERR_LASTCODE"
        {
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

/// The standard ABI's values of the engine's own enums (`Primitive`, `PredefinedOp`),
/// matched by C name at compile time: the engine numbers nothing the ABI numbers, and
/// abi.txt stays the one place the values are written. Used by the C library and by the
/// safe crate (its `ffi` types and rsmpi's raw constants), each generating it from the
/// same abi.txt with this function. A name the engine has and abi.txt lacks is a
/// compile error (the `const` tables panic during evaluation).
pub fn rust_abi_map(abi: &Abi) -> String {
    let mut r = String::from(
        "// Generated from abi.txt by gen::rust_abi_map.\n\
         const fn abi_value(table: &[(&str, usize)], name: &str) -> usize {\n\
         \x20   let mut i = 0;\n\
         \x20   while i < table.len() {\n        if oxmpi_core::const_str_eq(table[i].0, name) {\n            return table[i].1;\n        }\n        i += 1;\n    }\n\
         \x20   panic!(\"the engine names a constant abi.txt does not have\")\n}\n",
    );
    // (table name, C handle type, engine enum path, forward fn, backward fn, what)
    let kinds = [
        (
            "ABI_DATATYPES",
            "MPI_Datatype",
            "oxmpi_core::datatype::Primitive",
            "primitive_handle",
            "primitive_from_handle",
            "predefined datatype",
        ),
        (
            "ABI_OPS",
            "MPI_Op",
            "oxmpi_core::op::PredefinedOp",
            "op_handle",
            "op_from_handle",
            "predefined reduction operation",
        ),
    ];
    for (table, ctype, ty, fwd, back, what) in kinds {
        let entries: Vec<&Const> = abi.consts.iter().filter(|c| c.ctype == ctype).collect();
        // Aliases of these handles (`MPI_C_COMPLEX` for `MPI_C_FLOAT_COMPLEX`): the
        // engine may know a type by either name.
        let aliases = |target: &str| -> Vec<&str> {
            abi.consts
                .iter()
                .filter(|a| a.ctype == "alias" && a.value == target)
                .map(|a| a.name.as_str())
                .collect()
        };
        r.push_str(&format!("/// (C name, handle) of every {what} handle of abi.txt, aliases included.\nconst {table}: &[(&str, usize)] = &[\n"));
        for c in &entries {
            r.push_str(&format!("    (\"{}\", {}),\n", c.name, c.value));
            for a in aliases(&c.name) {
                r.push_str(&format!("    (\"{a}\", {}),\n", c.value));
            }
        }
        r.push_str("];\n");
        r.push_str(&format!(
            "/// The standard ABI's handle of a {what}.\n\
             pub fn {fwd}(x: {ty}) -> usize {{\n\
             \x20   const T: [usize; {ty}::ALL.len()] = {{\n\
             \x20       let mut t = [0usize; {ty}::ALL.len()];\n\
             \x20       let mut i = 0;\n\
             \x20       while i < t.len() {{\n\
             \x20           t[{ty}::ALL[i] as usize] = abi_value({table}, {ty}::ALL[i].name());\n\
             \x20           i += 1;\n\
             \x20       }}\n\
             \x20       t\n\
             \x20   }};\n\
             \x20   T[x as usize]\n}}\n"
        ));
        r.push_str(&format!("/// The {what} of a standard-ABI handle (None for other values).\npub fn {back}(h: usize) -> Option<{ty}> {{\n    match h {{\n"));
        for c in &entries {
            let mut names = vec![c.name.as_str()];
            names.extend(aliases(&c.name));
            // The first of the names the engine knows.
            let mut e = String::from("None");
            for n in names.iter().rev() {
                e = format!("match {ty}::from_name(\"{n}\") {{ Some(x) => Some(x), None => {e} }}");
            }
            r.push_str(&format!("        {} => const {{ {e} }},\n", c.value));
        }
        r.push_str("        _ => None,\n    }\n}\n");
    }
    // Integer-valued enums (many int constants share values, so the way back is a
    // search of the enum's few values).
    r.push_str("/// (C name, value as its 32 bits) of every integer constant of abi.txt.\nconst ABI_INTS: &[(&str, usize)] = &[\n");
    for c in abi.consts.iter().filter(|c| c.ctype == "int") {
        if let Ok(v) = c.value.parse::<i64>() {
            r.push_str(&format!("    (\"{}\", {}),\n", c.name, v as i32 as u32));
        }
    }
    r.push_str("];\n");
    let int_kinds = [
        (
            "oxmpi_core::group::Comparison",
            "comparison_value",
            "comparison_from_value",
            "result of MPI_Group_compare / MPI_Comm_compare",
        ),
        (
            "oxmpi_core::topo::TopologyKind",
            "topology_kind_value",
            "topology_kind_from_value",
            "topology kind of MPI_Topo_test",
        ),
        (
            "oxmpi_core::comm::create::SplitType",
            "split_type_value",
            "split_type_from_value",
            "split type of MPI_Comm_split_type",
        ),
        (
            "oxmpi_core::datatype::Combiner",
            "combiner_value",
            "combiner_from_value",
            "datatype combiner (MPI_Type_get_envelope)",
        ),
        (
            "oxmpi_core::runtime::ThreadLevel",
            "thread_level_value",
            "thread_level_from_value",
            "thread support level",
        ),
        (
            "oxmpi_core::error::ErrorClass",
            "error_class_value",
            "error_class_from_value",
            "error class (`MPI_SUCCESS`, `MPI_ERR_*`)",
        ),
    ];
    // Values the engine passes through unchanged because they equal the standard ABI's
    // (rank and tag sentinels, predefined attribute keyvals, RMA assertion bits): each
    // is checked against abi.txt when the library compiles, so abi.txt stays the one
    // source and a drifting engine constant is a compile error.
    let shared = [
        ("oxmpi_core::matching::ANY_SOURCE", "MPI_ANY_SOURCE"),
        ("oxmpi_core::matching::ANY_TAG", "MPI_ANY_TAG"),
        ("oxmpi_core::request::PROC_NULL", "MPI_PROC_NULL"),
        ("oxmpi_core::coll::inter::ROOT", "MPI_ROOT"),
        ("oxmpi_core::attr::KEYVAL_INVALID", "MPI_KEYVAL_INVALID"),
        ("oxmpi_core::attr::TAG_UB", "MPI_TAG_UB"),
        ("oxmpi_core::attr::IO", "MPI_IO"),
        ("oxmpi_core::attr::HOST", "MPI_HOST"),
        ("oxmpi_core::attr::WTIME_IS_GLOBAL", "MPI_WTIME_IS_GLOBAL"),
        ("oxmpi_core::attr::APPNUM", "MPI_APPNUM"),
        ("oxmpi_core::attr::LASTUSEDCODE", "MPI_LASTUSEDCODE"),
        ("oxmpi_core::attr::UNIVERSE_SIZE", "MPI_UNIVERSE_SIZE"),
        ("oxmpi_core::rma::MODE_NOCHECK", "MPI_MODE_NOCHECK"),
        ("oxmpi_core::rma::MODE_NOPRECEDE", "MPI_MODE_NOPRECEDE"),
        ("oxmpi_core::rma::MODE_NOPUT", "MPI_MODE_NOPUT"),
        ("oxmpi_core::rma::MODE_NOSTORE", "MPI_MODE_NOSTORE"),
        (
            "oxmpi_core::rma::epoch::MODE_NOSUCCEED",
            "MPI_MODE_NOSUCCEED",
        ),
    ];
    r.push_str("// The engine's constants that equal the standard ABI's values, checked against abi.txt.\nconst _: () = {\n");
    for (path, name) in shared {
        r.push_str(&format!(
            "    assert!({path} == abi_value(ABI_INTS, \"{name}\") as u32 as i32, \"{path} differs from abi.txt's {name}\");\n"
        ));
    }
    r.push_str("};\n");
    for (ty, fwd, back, what) in int_kinds {
        r.push_str(&format!(
            "/// The standard ABI's value of a {what}.\n\
             pub fn {fwd}(x: {ty}) -> std::ffi::c_int {{\n\
             \x20   const T: [std::ffi::c_int; {ty}::ALL.len()] = {{\n\
             \x20       let mut t = [0; {ty}::ALL.len()];\n\
             \x20       let mut i = 0;\n\
             \x20       while i < t.len() {{\n\
             \x20           t[{ty}::ALL[i] as usize] = abi_value(ABI_INTS, {ty}::ALL[i].name()) as u32 as std::ffi::c_int;\n\
             \x20           i += 1;\n\
             \x20       }}\n\
             \x20       t\n\
             \x20   }};\n\
             \x20   T[x as usize]\n}}\n\
             /// The {what} of a standard-ABI value.\n\
             pub fn {back}(v: std::ffi::c_int) -> Option<{ty}> {{\n\
             \x20   {ty}::ALL.iter().copied().find(|&x| {fwd}(x) == v)\n}}\n"
        ));
    }
    r
}

/// `MPI_x` shims calling the hand-written `PMPI_x` (so a tool's own `MPI_x` can
/// call `PMPI_x`).
pub fn rust_shims(abi: &Abi) -> String {
    let mut r = String::from("// Generated from abi.txt by build.rs.\n");
    for f in &abi.funcs {
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, p.rust))
            .collect();
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
/// The `PMPI_x` of the `query` lines: the argument checks written here, once, instead
/// of by hand in each body: a negative `count(...)` argument is MPI_ERR_COUNT and a
/// NULL OUT pointer MPI_ERR_ARG, each naming the call and the argument; the answer
/// (a tuple for several OUTs) from the area's `x(call, inputs...)`; errors to the
/// handler of the call's file, session or communicator (in that order), else the
/// process's.
/// The start of a generated `PMPI_x`'s body up to its closure: errors go to the handler of
/// the call's object, its file, window or session when it has one (as the hand-written
/// calls of those areas route theirs), else its communicator, else the process's.
fn route(ins: &[&Param]) -> String {
    if let Some(p) = ins.iter().find(|p| p.ctype == "MPI_File") {
        format!("crate::file::ffi_file(CALL, {}, ", p.name)
    } else if let Some(p) = ins.iter().find(|p| p.ctype == "MPI_Win") {
        format!("crate::win::wffi(CALL, {}, ", p.name)
    } else if let Some(p) = ins.iter().find(|p| p.ctype == "MPI_Session") {
        format!("crate::session::ffi_session(CALL, {}, None, ", p.name)
    } else {
        let comm = ins.iter().find(|p| p.ctype == "MPI_Comm");
        format!(
            "crate::conv::errors::ffi(CALL, {}, ",
            comm.map_or("crate::conv::errors::NO_COMM", |p| p.name.as_str())
        )
    }
}

/// The `PMPI_x` of the `fn` lines annotated `out(NAME, ...)` and/or `nonnull(NAME, ...)`:
/// each named pointer is checked first, in parameter order (NULL: MPI_ERR_ARG naming the
/// call and the argument, nothing else done), then the area's hand-written `x(call, params...)` runs with those pointers as
/// `&mut T`, each `status(NAME)` (NULL is MPI_STATUS_IGNORE, no error) as an
/// `Option<&mut MPI_Status>`, and every other parameter as the C caller passed it (an `unsafe fn` when one
/// of those is a pointer: its contract is the C caller's). Errors are routed as for the
/// `query` lines.
pub fn rust_checked(abi: &Abi) -> String {
    let mut r = String::from("// Generated from abi.txt by build.rs.\n");
    for f in abi.funcs.iter().filter(|f| {
        !f.checked_outs.is_empty()
            || !f.nonnull.is_empty()
            || !f.statuses.is_empty()
            || !f.arrays.is_empty()
            || !f.lenqueries.is_empty()
    }) {
        let is_out = |p: &Param| f.checked_outs.contains(&p.name);
        let is_status = |p: &Param| f.statuses.contains(&p.name);
        let array_len = |p: &Param| f.arrays.iter().find(|(n, _)| *n == p.name).map(|(_, l)| l);
        let lenquery = |p: &Param| {
            f.lenqueries
                .iter()
                .find(|(n, _)| *n == p.name)
                .map(|(_, l)| l)
        };
        let ins: Vec<&Param> = f
            .params
            .iter()
            .filter(|p| !is_out(p) && !is_status(p) && array_len(p).is_none())
            .collect();
        let route = match f.route.as_deref() {
            None => route(&ins),
            Some("file") => "crate::file::ffi_file(CALL, crate::abi::MPI_FILE_NULL, ".to_string(),
            Some("session") => {
                "crate::session::ffi_session(CALL, crate::abi::MPI_SESSION_NULL, None, ".to_string()
            }
            Some(comm) => format!("crate::conv::errors::ffi(CALL, crate::abi::{comm}, "),
        };
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, p.rust))
            .collect();
        let is_made = |p: &Param| f.made.contains(&p.name);
        let made: String = f
            .params
            .iter()
            .filter(|p| is_made(p))
            .map(|o| {
                let null = format!(
                    "{}_NULL",
                    o.rust.trim_start_matches("*mut ").to_uppercase()
                );
                format!(
                    "        // SAFETY: `{out}` is {name}'s OUT handle: NULL (rejected by `out`) or writable and unaliased (MPI contract).\n        \
                     let {out} = unsafe {{ crate::conv::errors::out(CALL, \"{out}\", {out})? }};\n        \
                     // A failing constructor leaves the null handle (MPI-4.1).\n        \
                     *{out} = crate::abi::{null};\n",
                    out = o.name,
                    name = f.name,
                )
            })
            .collect();
        // The other checks in parameter order, as one tuple of conversions (one `unsafe`
        // block, `?` stopping at the first failure); `lenquery` ones after it, as their
        // length is one of the tuple's OUTs.
        let mut names: Vec<&str> = vec![];
        let mut exprs: Vec<String> = vec![];
        let mut kinds: Vec<&str> = vec![];
        for o in f.params.iter().filter(|p| !is_made(p)) {
            let n = o.name.as_str();
            let e = if let Some(len) = array_len(o) {
                let conv = if o.rust.starts_with("*mut ") {
                    kinds.push("an OUT array NULL only when `LEN` is 0 (else rejected by `array_mut`), else `LEN` elements writable and unaliased");
                    "array_mut"
                } else {
                    kinds.push("an IN array NULL only when `LEN` is 0 (else rejected by `array`), else `LEN` elements readable and unwritten");
                    "array"
                };
                format!("crate::conv::errors::{conv}(CALL, \"{n}\", {n}, crate::conv::large::to_usize(CALL, \"{len}\", {len})?)?")
            } else if lenquery(o).is_some() {
                continue;
            } else if is_status(o) {
                kinds.push("a status NULL (MPI_STATUS_IGNORE) or writable and unaliased");
                format!("{n}.as_mut()")
            } else if f.nonnull.contains(&o.name) {
                format!("crate::conv::errors::nonnull(CALL, \"{n}\", {n})?")
            } else if is_out(o) {
                kinds.push("an OUT pointer NULL (rejected by `out`) or writable and unaliased");
                let cast = if f.addr_outs.contains(&o.name) {
                    " as *mut *mut c_void"
                } else {
                    ""
                };
                format!("crate::conv::errors::out(CALL, \"{n}\", {n}{cast})?")
            } else {
                continue;
            };
            names.push(n);
            exprs.push(e);
        }
        kinds.dedup();
        let mut checks = String::new();
        if !exprs.is_empty() {
            let (lhs, rhs) = if exprs.len() == 1 {
                (names[0].to_string(), exprs[0].clone())
            } else {
                (
                    format!("({})", names.join(", ")),
                    format!("({})", exprs.join(", ")),
                )
            };
            if kinds.is_empty() {
                checks.push_str(&format!("        let {lhs} = {rhs};\n"));
            } else {
                let mut ks: Vec<&str> = kinds.clone();
                ks.sort();
                ks.dedup();
                checks.push_str(&format!(
                    "        // SAFETY: {name}'s pointer arguments, checked in parameter order, are the C caller's (MPI contract): {}.\n        \
                     let {lhs} = unsafe {{ {rhs} }};\n",
                    ks.join("; "),
                    name = f.name,
                ));
            }
        }
        for o in f.params.iter() {
            if let Some(len) = lenquery(o) {
                checks.push_str(&format!(
                    "        if {n}.is_null() && *{len} > 0 {{\n            return Err(crate::conv::errors::bad(oxmpi_core::error::ErrorClass::Arg, CALL, \"{n}\", \"is NULL\"));\n        }}\n",
                    n = o.name
                ));
            }
        }
        let args: String = f.params.iter().map(|p| format!(", {}", p.name)).collect();
        let body = f
            .name
            .trim_start_matches("MPI_")
            .trim_start_matches("MPIX_")
            .to_lowercase();
        let call = if ins.iter().any(|p| p.rust.starts_with('*')) {
            format!(
                "        // SAFETY: the C caller's pointer arguments, which {name}'s body reads and writes as MPI defines them.\n        \
                 unsafe {{ crate::pmpi::{body}(CALL{args}) }}\n",
                name = f.name
            )
        } else {
            format!("        crate::pmpi::{body}(CALL{args})\n")
        };
        r.push_str(&format!(
            "#[no_mangle]\npub unsafe extern \"C\" fn P{name}({params}) -> c_int {{\n    const CALL: &str = \"{name}\";\n    \
             {route}|| {{\n{made}{checks}{call}    }})\n}}\n",
            name = f.name,
            params = params.join(", "),
        ));
    }
    r
}

/// The `PMPI_x` of the `fn` lines annotated `hot(BODY, EXTRA...)`: `conv::errors::hot`
/// over the area's `BODY_fast` (the hot case, `None` when not it) and `BODY` (the whole
/// body, with every argument check and error class of the call), each given the C
/// parameters as one tuple, then `EXTRA...`; errors routed to the call's communicator.
pub fn rust_hot(abi: &Abi) -> String {
    let mut r = String::from("// Generated from abi.txt by build.rs.\n");
    for f in abi.funcs.iter().filter(|f| f.hot.is_some()) {
        let (body, extra) = f.hot.as_ref().unwrap();
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, p.rust))
            .collect();
        let names: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
        let args: String = std::iter::once(format!("({})", names.join(", ")))
            .chain(extra.iter().cloned())
            .collect::<Vec<_>>()
            .join(", ");
        let comm = f.params.iter().find(|p| p.ctype == "MPI_Comm").unwrap();
        r.push_str(&format!(
            "#[no_mangle]\npub unsafe extern \"C\" fn P{name}({params}) -> c_int {{\n    \
             const CALL: &str = \"{name}\";\n    crate::conv::errors::hot(\n        CALL,\n        {comm},\n        \
             // SAFETY: the C caller's arguments, which {name}'s fast path uses as MPI defines them.\n        \
             || unsafe {{ crate::pmpi::{body}_fast({args}) }},\n        \
             // SAFETY: the C caller's arguments, which {name}'s body uses as MPI defines them.\n        \
             || unsafe {{ crate::pmpi::{body}(CALL, {args}) }},\n    )\n}}\n",
            name = f.name,
            params = params.join(", "),
            comm = comm.name,
        ));
    }
    r
}

/// The `PMPI_x` of the `fn` lines annotated `coll(BODY, EXTRA...)`: the area's
/// `BODY(params..., form, EXTRA...)`, `form` made of the call's trailing `info` and
/// `request` (see [`Func::coll`]).
pub fn rust_coll(abi: &Abi) -> String {
    let mut r = String::from("// Generated from abi.txt by build.rs.\n");
    for f in abi.funcs.iter().filter(|f| f.coll.is_some()) {
        let (body, extra) = f.coll.as_ref().unwrap();
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, p.rust))
            .collect();
        let ctypes: Vec<&str> = f.params.iter().map(|p| p.ctype.as_str()).collect();
        let (n, form) = match ctypes[..] {
            [.., "MPI_Info", "MPI_Request *"] => (2, "persistent"),
            [.., "MPI_Request *"] => (1, "immediate"),
            _ => (0, "Blocking"),
        };
        let at = f.params.len() - n;
        let form = match n {
            0 => format!("crate::coll::Form::{form}"),
            _ => {
                let fs: Vec<&str> = f.params[at..].iter().map(|p| p.name.as_str()).collect();
                format!("crate::coll::Form::{form}({})", fs.join(", "))
            }
        };
        let args: Vec<String> = f.params[..at]
            .iter()
            .map(|p| p.name.clone())
            .chain(std::iter::once(form.clone()))
            .chain(extra.iter().cloned())
            .collect();
        let call = match &f.empty {
            None => format!("crate::pmpi::{body}({})", args.join(", ")),
            Some((check, cargs)) => {
                let comm = f.params.iter().find(|p| p.ctype == "MPI_Comm").unwrap();
                let general: Vec<&str> = f.params[..at]
                    .iter()
                    .map(|p| p.name.as_str())
                    .chain(std::iter::once("form"))
                    .chain(extra.iter().map(String::as_str))
                    .collect();
                format!(
                    "crate::coll::entry(\n        {form},\n        {comm},\n        \
                     || crate::coll::empty::{check}({cargs}),\n        \
                     |form| crate::pmpi::{body}({general}),\n    )",
                    comm = comm.name,
                    cargs = cargs.join(", "),
                    general = general.join(", "),
                )
            }
        };
        r.push_str(&format!(
            "#[no_mangle]\npub unsafe extern \"C\" fn P{name}({params}) -> c_int {{\n    \
             // SAFETY: the C caller's arguments, passed on: the shared body (and the 0-count exit) need of them what {name}'s MPI contract demands.\n    \
             unsafe {{ {call} }}\n}}\n",
            name = f.name,
            params = params.join(", "),
        ));
    }
    r
}

pub fn rust_queries(abi: &Abi) -> String {
    let mut r = String::from("// Generated from abi.txt by build.rs.\n");
    for f in abi.funcs.iter().filter(|f| f.query) {
        let (ins, outs) = f.params.split_at(f.params.len() - f.outs);
        let route = route(&ins.iter().collect::<Vec<_>>());
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, p.rust))
            .collect();
        let args: String = ins.iter().map(|p| format!(", {}", p.name)).collect();
        let answer = f
            .name
            .trim_start_matches("MPI_")
            .trim_start_matches("MPIX_")
            .to_lowercase();
        let checks: String = f
            .counts
            .iter()
            .map(|c| {
                format!("        let {c} = crate::conv::large::to_usize(CALL, \"{c}\", {c})?;\n")
            })
            .collect();
        let names: Vec<String> = (0..outs.len()).map(|i| format!("v{i}")).collect();
        let bind = if outs.len() == 1 {
            names[0].clone()
        } else {
            format!("({})", names.join(", "))
        };
        // `outfirst`: each OUT checked up front (`o_NAME`), stored through after.
        let early: String = outs
            .iter()
            .filter(|_| f.outs_first)
            .map(|o| {
                let null = if o.ctype == "MPI_Comm *" {
                    format!("        *o_{} = crate::abi::MPI_COMM_NULL;\n", o.name)
                } else {
                    String::new()
                };
                format!(
                    "        // SAFETY: `{out}` is {name}'s OUT argument: NULL (rejected by `out`) or writable and unaliased (MPI contract).\n        \
                     let o_{out} = unsafe {{ crate::conv::errors::out(CALL, \"{out}\", {out})? }};\n{null}",
                    out = o.name,
                    name = f.name,
                )
            })
            .collect();
        let stores: String = outs
            .iter()
            .zip(&names)
            .map(|(o, v)| if f.outs_first {
                format!("        *o_{out} = {v};\n", out = o.name)
            } else {
                format!(
                    "        // SAFETY: `{out}` is {name}'s OUT argument: NULL (rejected by `out`) or writable and unaliased (MPI contract).\n        \
                     *unsafe {{ crate::conv::errors::out(CALL, \"{out}\", {out})? }} = {v};\n",
                    out = o.name,
                    name = f.name,
                )
            })
            .collect();
        // An input passed by pointer (an IN status, say) makes the answer an `unsafe fn`
        // whose contract is the C caller's.
        let answer_call = if ins.iter().any(|p| p.rust.starts_with('*')) {
            format!(
                "// SAFETY: the C caller's pointer arguments, which {name}'s answer function reads as MPI defines them.\n        \
                 let {bind} = unsafe {{ crate::pmpi::{answer}(CALL{args}) }}?;",
                name = f.name
            )
        } else {
            format!("let {bind} = crate::pmpi::{answer}(CALL{args})?;")
        };
        r.push_str(&format!(
            "#[no_mangle]\npub unsafe extern \"C\" fn P{name}({params}) -> c_int {{\n    const CALL: &str = \"{name}\";\n    \
             {route}|| {{\n{early}{checks}        {answer_call}\n{stores}        Ok(())\n    }})\n}}\n",
            name = f.name,
            params = params.join(", "),
        ));
    }
    r
}

pub fn rust_unsupported(abi: &Abi) -> String {
    let mut r = String::from("// Generated from abi.txt by build.rs.\n");
    for f in abi.funcs.iter().filter(|f| f.unsup.is_some()) {
        let area = area_text(f.unsup.as_deref().unwrap());
        let comm = f
            .params
            .iter()
            .find(|p| p.ctype == "MPI_Comm" && p.name == "comm");
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| {
                if comm.is_some_and(|c| c.name == p.name) {
                    format!("{}: {}", p.name, p.rust)
                } else {
                    format!("_{}: {}", p.name, p.rust)
                }
            })
            .collect();
        assert_eq!(
            f.ret, "int",
            "abi.txt: unsupported function {} must return int",
            f.name
        );
        r.push_str(&format!(
            "#[no_mangle]\npub unsafe extern \"C\" fn P{}({}) -> c_int {{\n    crate::conv::errors::unsupported(\"{}\", {}, \"{}\")\n}}\n",
            f.name,
            params.join(", "),
            f.name,
            if comm.is_some() { "comm" } else { "crate::conv::errors::NO_COMM" },
            area
        ));
    }
    r
}

// ===================================================================================
// Fortran: the `mpif.h` / `use mpi` procedures (Rust, compiled into libmpi) and the
// Fortran text of `mpif.h` and of the `mpi` module (laid out by `cargo xtask dist`).
// A C function of abi.txt gets a Fortran binding mechanically when each parameter
// has a mechanical Fortran form; the others are written by hand in
// `src/fortran/` (callbacks, attributes, MPI_Init) or listed as skipped.
// ===================================================================================

/// The Fortran form of one C parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum FKind {
    /// `int x` (also a LOGICAL in Fortran: gfortran's .TRUE. is 1, as C's).
    IntVal,
    /// `MPI_Aint x` / `MPI_Count x` / `MPI_Offset x` (Rust type).
    WideVal(&'static str),
    /// A pointer passed on as is (`int *`, `int []`, `MPI_Aint *`, ...).
    Ptr,
    /// `int *weights`: MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY are Fortran sentinels.
    Weights,
    /// `int array_of_errcodes[]`: MPI_ERRCODES_IGNORE is a Fortran sentinel.
    Errcodes,
    /// A choice buffer: MPI_BOTTOM / MPI_IN_PLACE / MPI_BUFFER_AUTOMATIC are sentinels.
    Buf,
    StrIn,
    StrOut,
    /// A handle by value: Fortran INTEGER, `MPI_x_f2c`. (The stem: `Comm`, `Type`, ...)
    HandleVal(String),
    /// A handle by pointer (IN/OUT/INOUT): converted both ways.
    HandlePtr(String),
    /// An array of handles; the Rust expression of its length.
    HandleArr(String, String),
    Status,
    Statuses,
}

pub struct FFunc<'a> {
    pub f: &'a Func,
    pub kinds: Vec<FKind>,
}

/// The stem of a handle type's conversion functions (`MPI_Comm_c2f` -> `Comm`).
fn handle_stem(t: &str) -> Option<&'static str> {
    Some(match t {
        "MPI_Comm" => "Comm",
        "MPI_Datatype" => "Type",
        "MPI_Group" => "Group",
        "MPI_Request" => "Request",
        "MPI_Op" => "Op",
        "MPI_Errhandler" => "Errhandler",
        "MPI_Info" => "Info",
        "MPI_Message" => "Message",
        "MPI_File" => "File",
        "MPI_Win" => "Win",
        "MPI_Session" => "Session",
        _ => return None,
    })
}

/// Functions whose Fortran binding `src/fortran/` writes by hand.
pub const FORTRAN_BY_HAND: &[&str] = &[
    "MPI_Init",
    "MPI_Init_thread",
    "MPI_Op_create",
    "MPI_Comm_create_errhandler",
    "MPI_Errhandler_create",
    "MPI_Comm_create_keyval",
    "MPI_Type_create_keyval",
    "MPI_Win_create_keyval",
    "MPI_Keyval_create",
    "MPI_Comm_set_attr",
    "MPI_Comm_get_attr",
    "MPI_Type_set_attr",
    "MPI_Type_get_attr",
    "MPI_Win_set_attr",
    "MPI_Win_get_attr",
    "MPI_Attr_put",
    "MPI_Attr_get",
    "MPI_Info_get_string",
    "MPI_Grequest_start",
    "MPI_Info_create_env",
    "MPI_Comm_spawn",
    "MPI_Win_create_errhandler",
    "MPI_File_create_errhandler",
    // MPI-1 forms whose Fortran addresses are default INTEGERs.
    "MPI_Type_hvector",
    "MPI_Type_hindexed",
    "MPI_Type_struct",
    "MPI_Address",
    "MPI_Type_extent",
    "MPI_Type_lb",
    "MPI_Type_ub",
    "MPI_Comm_spawn_multiple",
];

/// Whether a C function has a Fortran binding at all: not the large-count `_c`
/// forms (Fortran's `mpif.h`/`mpi` have none), not the C-only handle conversions.
fn fortran_relevant(f: &Func) -> bool {
    !(f.name.ends_with("_c") || c_only(f))
}

/// C-only functions: handle conversions (`_c2f`, `_f2c`, the ABI's `_toint` /
/// `_fromint`), the status conversions and the tool interface (MPI_T has no
/// Fortran binding).
fn c_only(f: &Func) -> bool {
    let n = f.name.as_str();
    n.ends_with("_c2f")
        || n.ends_with("_f2c")
        || n.ends_with("_toint")
        || n.ends_with("_fromint")
        || n.starts_with("MPI_Status_c2f")
        || n.starts_with("MPI_Status_f2c")
        || n.contains("f08")
        || n.starts_with("MPI_T_")
}

/// An MPI-4 large-count form (`MPI_Send_c`): bound in `mpi_f08` only, as an
/// overload of the `int` form's generic name.
fn is_large_count(f: &Func) -> bool {
    f.name.ends_with("_c") && !c_only(f)
}

/// The kinds of INTEGER a procedure's parameters take, position by position
/// (4: default INTEGER, 8: MPI_ADDRESS_KIND/MPI_COUNT_KIND, 0: other): two forms
/// are distinguishable in a generic when some position differs.
fn integer_kinds(f: &Func, ff: &FFunc) -> Vec<u8> {
    f.params
        .iter()
        .zip(&ff.kinds)
        .map(|(p, k)| match k {
            FKind::IntVal => 4,
            FKind::WideVal(_) => 8,
            FKind::Ptr => match p.ctype.trim_start_matches("const ").replace('*', "").trim() {
                "int" => 4,
                _ => 8,
            },
            _ => 0,
        })
        .collect()
}

/// The mechanical Fortran form of `f`, or why there is none.
pub fn fortran_form<'a>(abi: &Abi, f: &'a Func) -> Result<FFunc<'a>, String> {
    let has = |n: &str| abi.funcs.iter().any(|g| g.name == n);
    if !matches!(f.ret.as_str(), "int" | "double" | "MPI_Aint") {
        return Err(format!("returns {}", f.ret));
    }
    let int_param = |names: &[&str]| {
        f.params
            .iter()
            .find(|p| {
                names.contains(&p.name.as_str()) && matches!(p.ctype.as_str(), "int" | "MPI_Count")
            })
            .map(|p| {
                format!(
                    "*({} as *const {})",
                    p.name,
                    if p.ctype == "int" { "c_int" } else { "i64" }
                )
            })
    };
    let mut kinds = vec![];
    for p in &f.params {
        let ty = p.ctype.trim_start_matches("const ").trim();
        let base = ty.replace('*', "").trim().to_string();
        let stars = ty.matches('*').count();
        let k = if base.ends_with("_function") || base.ends_with("_function_c") {
            return Err(format!("callback parameter {}", p.name));
        } else if base == "MPI_Fint"
            || base.contains("char") && stars > 1
            || p.ctype.contains("char *") && p.name.starts_with("argv")
        {
            return Err(format!(
                "parameter {} has no mechanical Fortran form",
                p.name
            ));
        } else if base == "char" {
            if stars != 1 {
                return Err(format!("string array {}", p.name));
            }
            if p.ctype.starts_with("const") {
                FKind::StrIn
            } else {
                FKind::StrOut
            }
        } else if base == "void" {
            if stars != 1 || p.name == "attribute_val" || p.name == "extra_state" {
                return Err(format!("untyped parameter {}", p.name));
            }
            FKind::Buf
        } else if base == "MPI_Status" {
            if p.name.contains("statuses") {
                FKind::Statuses
            } else {
                FKind::Status
            }
        } else if let Some(stem) = handle_stem(&base) {
            if !has(&format!("MPI_{stem}_f2c")) || !has(&format!("MPI_{stem}_c2f")) {
                return Err(format!("no MPI_{stem}_f2c in abi.txt"));
            }
            match stars {
                0 => FKind::HandleVal(stem.into()),
                1 if !p.rust.contains("*const")
                    && !p.name.starts_with("array_of")
                    && !p.name.ends_with("types") =>
                {
                    FKind::HandlePtr(stem.into())
                }
                1 => {
                    let len = match p.name.as_str() {
                        "array_of_requests" => int_param(&["count", "incount"]),
                        "array_of_types" | "array_of_info" => int_param(&["count"]),
                        "array_of_datatypes" => int_param(&["max_datatypes"]),
                        "sendtypes" | "recvtypes" if f.params.iter().any(|q| q.name == "comm") => {
                            Some(format!(
                                "crate::fortran::typevec_len(\"{}\", a_comm, {})",
                                f.name,
                                p.name == "sendtypes"
                            ))
                        }
                        _ => None,
                    };
                    FKind::HandleArr(
                        stem.into(),
                        len.ok_or_else(|| format!("no length known for handle array {}", p.name))?,
                    )
                }
                _ => return Err(format!("parameter {}", p.name)),
            }
        } else if matches!(
            base.as_str(),
            "int" | "MPI_Aint" | "MPI_Count" | "MPI_Offset"
        ) {
            match (stars, base.as_str()) {
                (0, "int") => FKind::IntVal,
                (0, "MPI_Aint") => FKind::WideVal("MPI_Aint"),
                (0, _) => FKind::WideVal("i64"),
                (1, "int") if p.name.contains("weights") => FKind::Weights,
                (1, "int") if p.name.contains("errcodes") => FKind::Errcodes,
                (1, _) => FKind::Ptr,
                _ => return Err(format!("parameter {}", p.name)),
            }
        } else {
            return Err(format!("parameter {} of type {}", p.name, p.ctype));
        };
        kinds.push(k);
    }
    Ok(FFunc { f, kinds })
}

/// The Fortran symbol gfortran calls for `MPI_Xyz`: `mpi_xyz_`.
pub fn fortran_symbol(name: &str) -> String {
    format!("{}_", name.to_ascii_lowercase())
}

/// Rust: `mpi_x_` / `pmpi_x_` for every mechanically bound function, and the
/// list of functions with no Fortran binding.
pub fn rust_fortran(abi: &Abi) -> String {
    let mut r = String::from("// Generated from abi.txt by build.rs (gen.rs `rust_fortran`).\n");
    let mut skipped = vec![];
    for f in abi
        .funcs
        .iter()
        .filter(|f| fortran_relevant(f) || is_large_count(f))
    {
        if FORTRAN_BY_HAND.contains(&f.name.as_str()) {
            continue;
        }
        let ff = match fortran_form(abi, f) {
            Ok(ff) => ff,
            Err(why) => {
                skipped.push((f.name.clone(), why));
                continue;
            }
        };
        let sym = fortran_symbol(&f.name);
        let mut params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: *mut c_void", p.name))
            .collect();
        // MPI_PCONTROL(LEVEL) has no IERROR (the C function is variadic).
        let procedure = f.ret == "int" && !f.variadic;
        if procedure {
            params.push("ierror: *mut c_int".into());
        }
        for (p, k) in f.params.iter().zip(&ff.kinds) {
            if matches!(k, FKind::StrIn | FKind::StrOut) {
                params.push(format!("{}_len: usize", p.name));
            }
        }
        let mut pre = String::new();
        let mut post = String::new();
        let mut args = vec![];
        // Handles by value first: array lengths may need the communicator.
        for (p, k) in f.params.iter().zip(&ff.kinds) {
            if let FKind::HandleVal(stem) = k {
                pre.push_str(&format!(
                    "        let a_{n} = crate::pmpi::PMPI_{stem}_f2c(*({n} as *const c_int));\n",
                    n = p.name
                ));
            }
        }
        for (p, k) in f.params.iter().zip(&ff.kinds) {
            let n = &p.name;
            let arg = match k {
                FKind::IntVal => format!("*({n} as *const c_int)"),
                FKind::WideVal(t) => format!("*({n} as *const {t})"),
                FKind::Ptr => format!("{n} as {}", p.rust),
                FKind::Weights => format!("crate::fortran::weights({n}) as {}", p.rust),
                FKind::Errcodes => format!("crate::fortran::errcodes({n}) as {}", p.rust),
                FKind::Buf => format!("crate::fortran::buf({n}) as {}", p.rust),
                FKind::Status => format!("crate::fortran::status({n}) as {}", p.rust),
                FKind::Statuses => format!("crate::fortran::status({n}) as {}", p.rust),
                FKind::StrIn => {
                    pre.push_str(&format!(
                        "        let s_{n} = crate::fortran::str_in({n}, {n}_len);\n"
                    ));
                    format!("s_{n}.as_ptr() as {}", p.rust)
                }
                FKind::StrOut => {
                    pre.push_str(&format!(
                        "        let mut s_{n} = crate::fortran::str_buf({n}_len);\n"
                    ));
                    // Untouched when the call fails or finds nothing (MPI_INFO_GET
                    // with FLAG = .FALSE. leaves VALUE as it was).
                    let found = if f
                        .params
                        .iter()
                        .any(|q| q.name == "flag" && q.ctype == "int *")
                    {
                        " && *(flag as *const c_int) != 0"
                    } else {
                        ""
                    };
                    post.push_str(&format!("        if rc == crate::abi::MPI_SUCCESS{found} {{ crate::fortran::str_out({n}, {n}_len, &s_{n}); }}\n"));
                    format!("s_{n}.as_mut_ptr() as {}", p.rust)
                }
                FKind::HandleVal(_) => format!("a_{n}"),
                FKind::HandlePtr(stem) => {
                    pre.push_str(&format!(
                        "        let mut h_{n}: usize = if {n}.is_null() {{ 0 }} else {{ crate::pmpi::PMPI_{stem}_f2c(*({n} as *const c_int)) }};\n        let h0_{n} = h_{n};\n"
                    ));
                    post.push_str(&format!(
                        "        if !{n}.is_null() && h_{n} != h0_{n} {{ *({n} as *mut c_int) = crate::pmpi::PMPI_{stem}_c2f(h_{n}); }}\n"
                    ));
                    format!("if {n}.is_null() {{ std::ptr::null_mut() }} else {{ &mut h_{n} as *mut usize }} as {}", p.rust)
                }
                FKind::HandleArr(stem, len) => {
                    pre.push_str(&format!(
                        "        let l_{n} = if {n}.is_null() {{ 0 }} else {{ (({len}) as i64).clamp(0, 1 << 24) as usize }};\n        let mut h_{n}: Vec<usize> = (0..l_{n}).map(|i| crate::pmpi::PMPI_{stem}_f2c(*({n} as *const c_int).add(i))).collect();\n        let h0_{n} = h_{n}.clone();\n"
                    ));
                    post.push_str(&format!(
                        "        for i in 0..l_{n} {{ if h_{n}[i] != h0_{n}[i] {{ *({n} as *mut c_int).add(i) = crate::pmpi::PMPI_{stem}_c2f(h_{n}[i]); }} }}\n"
                    ));
                    format!("if {n}.is_null() {{ std::ptr::null_mut() }} else {{ h_{n}.as_mut_ptr() }} as {}", p.rust)
                }
            };
            args.push(arg);
        }
        // Fortran counts request indices from 1 (MPI_WAITANY, MPI_TESTSOME, ...).
        if f.params.iter().any(|p| p.name == "array_of_requests") {
            if f.params
                .iter()
                .any(|p| p.name == "index" && p.ctype == "int *")
            {
                post.push_str("        if !index.is_null() && *(index as *const c_int) >= 0 { *(index as *mut c_int) += 1; }\n");
            }
            if f.params.iter().any(|p| p.name == "array_of_indices")
                && f.params.iter().any(|p| p.name == "outcount")
            {
                post.push_str("        if !array_of_indices.is_null() && !outcount.is_null() { for i in 0..(*(outcount as *const c_int)).max(0) as usize { *(array_of_indices as *mut c_int).add(i) += 1; } }\n");
            }
        }
        // MPI_Info_get: `valuelen` may not exceed the Fortran string's length.
        if let Some(i) = f
            .params
            .iter()
            .position(|p| p.name == "valuelen" && p.ctype == "int")
        {
            if f.params.iter().any(|p| p.name == "value") {
                args[i] = "(*(valuelen as *const c_int)).min(value_len.min(c_int::MAX as usize) as c_int)".into();
            }
        }
        let call = format!("crate::pmpi::P{}({})", f.name, args.join(", "));
        let (ret, body_end) = if f.variadic {
            (String::new(), format!("        {call};\n"))
        } else if procedure {
            (String::new(), format!("        let rc = {call};\n{post}        crate::fortran::set_ierror(ierror, rc);\n"))
        } else {
            (
                format!(" -> {}", rust_ret(&f.ret)),
                format!("        {call}\n"),
            )
        };
        let arg_names: Vec<String> = params
            .iter()
            .map(|p| p.split(':').next().unwrap().to_string())
            .collect();
        r.push_str(&format!(
            "#[no_mangle]\npub unsafe extern \"C\" fn p{sym}({}){ret} {{\n    let _fortran = crate::conv::errors::FortranCall::enter();\n    // SAFETY: the Fortran caller passes every argument by reference as the standard's\n    // binding of {} declares it (strings with their hidden lengths); sentinels and\n    // handles are translated before the C function sees them.\n    unsafe {{\n{pre}{body_end}    }}\n}}\n",
            params.join(", "),
            f.name
        ));
        r.push_str(&format!(
            "#[no_mangle]\npub unsafe extern \"C\" fn {sym}({}){ret} {{\n    // SAFETY: the same contract as the PMPI twin.\n    unsafe {{ p{sym}({}) }}\n}}\n",
            params.join(", "),
            arg_names.join(", ")
        ));
    }
    r.push_str("/// C functions with no Fortran binding, and why.\npub const FORTRAN_SKIPPED: &[(&str, &str)] = &[\n");
    for (n, why) in &skipped {
        r.push_str(&format!("    (\"{n}\", \"{why}\"),\n"));
    }
    r.push_str("];\n");
    r
}

/// The value of a constant, aliases followed.
fn const_value<'a>(abi: &'a Abi, c: &'a Const) -> &'a Const {
    let mut c = c;
    for _ in 0..8 {
        if c.ctype != "alias" {
            break;
        }
        match abi.consts.iter().find(|d| d.name == c.value) {
            Some(d) => c = d,
            None => break,
        }
    }
    c
}

/// An integer constant's value (None for a value Fortran cannot take as an
/// INTEGER: the constant is then left out of the Fortran bindings).
fn fortran_int(v: &str) -> Option<i64> {
    match v.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Fortran callback procedures the library defines (`MPI_COMM_DUP_FN`, ...).
pub const FORTRAN_PREDEFINED_PROCS: &[&str] = &[
    "MPI_COMM_NULL_COPY_FN",
    "MPI_COMM_DUP_FN",
    "MPI_COMM_NULL_DELETE_FN",
    "MPI_TYPE_NULL_COPY_FN",
    "MPI_TYPE_DUP_FN",
    "MPI_TYPE_NULL_DELETE_FN",
    "MPI_WIN_NULL_COPY_FN",
    "MPI_WIN_DUP_FN",
    "MPI_WIN_NULL_DELETE_FN",
    "MPI_NULL_COPY_FN",
    "MPI_DUP_FN",
    "MPI_NULL_DELETE_FN",
];

/// The sentinels: (name, declaration suffix, common block).
const FORTRAN_SENTINELS: &[(&str, &str, &str)] = &[
    ("MPI_BOTTOM", "", "MPI_FORTRAN_BOTTOM"),
    ("MPI_IN_PLACE", "", "MPI_FORTRAN_IN_PLACE"),
    ("MPI_BUFFER_AUTOMATIC", "", "MPI_FORTRAN_BUFFER_AUTOMATIC"),
    (
        "MPI_STATUS_IGNORE",
        "(MPI_STATUS_SIZE)",
        "MPI_FORTRAN_STATUS_IGNORE",
    ),
    (
        "MPI_STATUSES_IGNORE",
        "(MPI_STATUS_SIZE,1)",
        "MPI_FORTRAN_STATUSES_IGNORE",
    ),
    ("MPI_ERRCODES_IGNORE", "(1)", "MPI_FORTRAN_ERRCODES_IGNORE"),
    // Arrays of one, as the weight arguments they stand for are arrays.
    ("MPI_UNWEIGHTED", "(1)", "MPI_FORTRAN_UNWEIGHTED"),
    ("MPI_WEIGHTS_EMPTY", "(1)", "MPI_FORTRAN_WEIGHTS_EMPTY"),
];

/// The declarations shared by `mpif.h` and the `mpi` module, in a form both
/// fixed and free source form accept (statements from column 7, at most 72
/// columns, `!` comments in column 1). `module`: the module declares the
/// functions through interfaces instead of EXTERNAL statements.
pub fn fortran_decls(abi: &Abi, module: bool) -> String {
    let mut h = String::new();
    let param = |h: &mut String, ty: &str, name: &str, v: &str| {
        h.push_str(&format!(
            "      {ty} {name}\n      PARAMETER ({name}={v})\n"
        ));
    };
    h.push_str("! kinds and the status layout\n");
    for (n, v) in [
        ("MPI_ADDRESS_KIND", "8"),
        ("MPI_OFFSET_KIND", "8"),
        ("MPI_COUNT_KIND", "8"),
        ("MPI_INTEGER_KIND", "4"),
        ("MPI_STATUS_SIZE", "8"),
        ("MPI_SOURCE", "1"),
        ("MPI_TAG", "2"),
        ("MPI_ERROR", "3"),
    ] {
        param(&mut h, "INTEGER", n, v);
    }
    param(&mut h, "LOGICAL", "MPI_SUBARRAYS_SUPPORTED", ".FALSE.");
    param(
        &mut h,
        "LOGICAL",
        "MPI_ASYNC_PROTECTS_NONBLOCKING",
        ".FALSE.",
    );
    h.push_str("! constants of abi.txt (handles are their Fortran integers)\n");
    for c in &abi.consts {
        if c.name.starts_with("MPI_F_") {
            continue;
        }
        let d = const_value(abi, c);
        let ty = d.ctype.as_str();
        let Some(v) = fortran_int(&d.value) else {
            continue;
        };
        if ty == "int" || is_handle_type(ty) {
            param(&mut h, "INTEGER", &c.name, &v.to_string());
        } else if ty == "MPI_Offset" {
            param(
                &mut h,
                "INTEGER(KIND=MPI_OFFSET_KIND)",
                &c.name,
                &v.to_string(),
            );
        }
    }
    h.push_str("! sentinels: variables the library recognizes by address\n");
    for (n, dims, block) in FORTRAN_SENTINELS {
        h.push_str(&format!(
            "      INTEGER {n}{dims}\n      COMMON /{block}/ {n}\n"
        ));
    }
    h.push_str(
        "      CHARACTER*1 MPI_ARGV_NULL(1)\n      COMMON /MPI_FORTRAN_ARGV_NULL/ MPI_ARGV_NULL\n",
    );
    h.push_str("      CHARACTER*1 MPI_ARGVS_NULL(1,1)\n      COMMON /MPI_FORTRAN_ARGVS_NULL/ MPI_ARGVS_NULL\n");
    h.push_str("! predefined attribute copy and delete procedures\n");
    for p in FORTRAN_PREDEFINED_PROCS {
        h.push_str(&format!("      EXTERNAL {p}\n"));
    }
    if !module {
        h.push_str("! functions\n");
        for (n, ty) in [
            ("MPI_WTIME", "DOUBLE PRECISION"),
            ("MPI_WTICK", "DOUBLE PRECISION"),
            ("PMPI_WTIME", "DOUBLE PRECISION"),
            ("PMPI_WTICK", "DOUBLE PRECISION"),
            ("MPI_AINT_ADD", "INTEGER(KIND=MPI_ADDRESS_KIND)"),
            ("MPI_AINT_DIFF", "INTEGER(KIND=MPI_ADDRESS_KIND)"),
        ] {
            h.push_str(&format!("      {ty} {n}\n      EXTERNAL {n}\n"));
        }
    }
    h
}

/// `mpif.h`.
pub fn fortran_header(abi: &Abi) -> String {
    let mut h = String::new();
    h.push_str("! mpif.h for oxmpi: the MPI Fortran binding of INCLUDE 'mpif.h'.\n");
    h.push_str("! Generated from crates/oxmpi-capi/abi.txt by `cargo xtask dist`.\n");
    h.push_str("! Fixed and free source form alike. Do not edit.\n");
    h.push_str(&fortran_decls(abi, false));
    h
}

/// Names whose Fortran dummy is LOGICAL (C `int`).
fn fortran_logical(name: &str) -> bool {
    matches!(
        name,
        "flag" | "reorder" | "periods" | "commute" | "high" | "remain_dims" | "weighted"
    )
}

/// The Fortran declaration of a dummy of the standard's binding.
fn fortran_dummy(p: &Param, k: &FKind) -> Vec<String> {
    let n = &p.name;
    let arr = match p.array {
        3 => "(3,*)",
        1 => "(*)",
        _ => "",
    };
    let scalar = |t: &str| vec![format!("{t} :: {n}{arr}")];
    match k {
        FKind::IntVal => scalar(if fortran_logical(n) {
            "LOGICAL"
        } else {
            "INTEGER"
        }),
        FKind::WideVal("MPI_Aint") => scalar("INTEGER(KIND=MPI_ADDRESS_KIND)"),
        FKind::WideVal(_) => scalar("INTEGER(KIND=MPI_COUNT_KIND)"),
        FKind::Ptr => {
            let base = p
                .ctype
                .trim_start_matches("const ")
                .replace('*', "")
                .trim()
                .to_string();
            match base.as_str() {
                "MPI_Aint" => scalar("INTEGER(KIND=MPI_ADDRESS_KIND)"),
                "MPI_Count" | "MPI_Offset" => scalar("INTEGER(KIND=MPI_COUNT_KIND)"),
                _ => scalar(if fortran_logical(n) {
                    "LOGICAL"
                } else {
                    "INTEGER"
                }),
            }
        }
        FKind::Weights | FKind::Errcodes => vec![format!("INTEGER :: {n}(*)")],
        FKind::Buf => vec![
            format!("!GCC$ ATTRIBUTES NO_ARG_CHECK :: {n}"),
            format!("TYPE(*), DIMENSION(*) :: {n}"),
        ],
        FKind::StrIn | FKind::StrOut => vec![format!("CHARACTER(LEN=*) :: {n}")],
        FKind::HandleVal(_) | FKind::HandlePtr(_) => vec![format!("INTEGER :: {n}")],
        FKind::HandleArr(..) => vec![format!("INTEGER :: {n}(*)")],
        FKind::Status => vec![format!("INTEGER :: {n}(MPI_STATUS_SIZE)")],
        FKind::Statuses => vec![format!("INTEGER :: {n}(MPI_STATUS_SIZE,*)")],
    }
}

/// Interfaces of the procedures `src/fortran/` writes by hand.
const FORTRAN_BY_HAND_INTERFACES: &str = "
SUBROUTINE MPI_INIT(ierror)
INTEGER :: ierror
END SUBROUTINE
SUBROUTINE MPI_INIT_THREAD(required, provided, ierror)
INTEGER :: required, provided, ierror
END SUBROUTINE
SUBROUTINE MPI_OP_CREATE(user_fn, commute, op, ierror)
EXTERNAL :: user_fn
LOGICAL :: commute
INTEGER :: op, ierror
END SUBROUTINE
SUBROUTINE MPI_COMM_CREATE_ERRHANDLER(comm_errhandler_fn, errhandler, ierror)
EXTERNAL :: comm_errhandler_fn
INTEGER :: errhandler, ierror
END SUBROUTINE
SUBROUTINE MPI_ERRHANDLER_CREATE(function, errhandler, ierror)
EXTERNAL :: function
INTEGER :: errhandler, ierror
END SUBROUTINE
SUBROUTINE MPI_COMM_CREATE_KEYVAL(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state, ierror)
EXTERNAL :: comm_copy_attr_fn, comm_delete_attr_fn
INTEGER :: comm_keyval, ierror
INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
END SUBROUTINE
SUBROUTINE MPI_TYPE_CREATE_KEYVAL(type_copy_attr_fn, type_delete_attr_fn, type_keyval, extra_state, ierror)
EXTERNAL :: type_copy_attr_fn, type_delete_attr_fn
INTEGER :: type_keyval, ierror
INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
END SUBROUTINE
SUBROUTINE MPI_WIN_CREATE_KEYVAL(win_copy_attr_fn, win_delete_attr_fn, win_keyval, extra_state, ierror)
EXTERNAL :: win_copy_attr_fn, win_delete_attr_fn
INTEGER :: win_keyval, ierror
INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
END SUBROUTINE
SUBROUTINE MPI_KEYVAL_CREATE(copy_fn, delete_fn, keyval, extra_state, ierror)
EXTERNAL :: copy_fn, delete_fn
INTEGER :: keyval, extra_state, ierror
END SUBROUTINE
SUBROUTINE MPI_COMM_SET_ATTR(comm, comm_keyval, attribute_val, ierror)
INTEGER :: comm, comm_keyval, ierror
INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val
END SUBROUTINE
SUBROUTINE MPI_COMM_GET_ATTR(comm, comm_keyval, attribute_val, flag, ierror)
INTEGER :: comm, comm_keyval, ierror
INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val
LOGICAL :: flag
END SUBROUTINE
SUBROUTINE MPI_TYPE_SET_ATTR(datatype, type_keyval, attribute_val, ierror)
INTEGER :: datatype, type_keyval, ierror
INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val
END SUBROUTINE
SUBROUTINE MPI_TYPE_GET_ATTR(datatype, type_keyval, attribute_val, flag, ierror)
INTEGER :: datatype, type_keyval, ierror
INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val
LOGICAL :: flag
END SUBROUTINE
SUBROUTINE MPI_WIN_SET_ATTR(win, win_keyval, attribute_val, ierror)
INTEGER :: win, win_keyval, ierror
INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val
END SUBROUTINE
SUBROUTINE MPI_WIN_GET_ATTR(win, win_keyval, attribute_val, flag, ierror)
INTEGER :: win, win_keyval, ierror
INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val
LOGICAL :: flag
END SUBROUTINE
SUBROUTINE MPI_ATTR_PUT(comm, keyval, attribute_val, ierror)
INTEGER :: comm, keyval, attribute_val, ierror
END SUBROUTINE
SUBROUTINE MPI_ATTR_GET(comm, keyval, attribute_val, flag, ierror)
INTEGER :: comm, keyval, attribute_val, ierror
LOGICAL :: flag
END SUBROUTINE
SUBROUTINE MPI_WIN_CREATE_ERRHANDLER(win_errhandler_fn, errhandler, ierror)
EXTERNAL :: win_errhandler_fn
INTEGER :: errhandler, ierror
END SUBROUTINE
SUBROUTINE MPI_FILE_CREATE_ERRHANDLER(file_errhandler_fn, errhandler, ierror)
EXTERNAL :: file_errhandler_fn
INTEGER :: errhandler, ierror
END SUBROUTINE
SUBROUTINE MPI_GREQUEST_START(query_fn, free_fn, cancel_fn, extra_state, request, ierror)
EXTERNAL :: query_fn, free_fn, cancel_fn
INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
INTEGER :: request, ierror
END SUBROUTINE
SUBROUTINE MPI_INFO_CREATE_ENV(info, ierror)
INTEGER :: info, ierror
END SUBROUTINE
SUBROUTINE MPI_COMM_SPAWN(command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes, ierror)
CHARACTER(LEN=*) :: command, argv(*)
INTEGER :: maxprocs, info, root, comm, intercomm, array_of_errcodes(*), ierror
END SUBROUTINE
SUBROUTINE MPI_TYPE_HVECTOR(count, blocklength, stride, oldtype, newtype, ierror)
INTEGER :: count, blocklength, stride, oldtype, newtype, ierror
END SUBROUTINE
SUBROUTINE MPI_TYPE_HINDEXED(count, array_of_blocklengths, array_of_displacements, oldtype, newtype, ierror)
INTEGER :: count, array_of_blocklengths(*), array_of_displacements(*), oldtype, newtype, ierror
END SUBROUTINE
SUBROUTINE MPI_TYPE_STRUCT(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype, ierror)
INTEGER :: count, array_of_blocklengths(*), array_of_displacements(*), array_of_types(*), newtype, ierror
END SUBROUTINE
SUBROUTINE MPI_ADDRESS(location, address, ierror)
!GCC$ ATTRIBUTES NO_ARG_CHECK :: location
TYPE(*), DIMENSION(*) :: location
INTEGER :: address, ierror
END SUBROUTINE
SUBROUTINE MPI_TYPE_EXTENT(datatype, extent, ierror)
INTEGER :: datatype, extent, ierror
END SUBROUTINE
SUBROUTINE MPI_TYPE_LB(datatype, displacement, ierror)
INTEGER :: datatype, displacement, ierror
END SUBROUTINE
SUBROUTINE MPI_TYPE_UB(datatype, displacement, ierror)
INTEGER :: datatype, displacement, ierror
END SUBROUTINE
SUBROUTINE MPI_COMM_SPAWN_MULTIPLE(count, array_of_commands, array_of_argv, &
    array_of_maxprocs, array_of_info, root, comm, intercomm, array_of_errcodes, ierror)
INTEGER :: count
CHARACTER(LEN=*) :: array_of_commands(*), array_of_argv(count, *)
INTEGER :: array_of_maxprocs(*), array_of_info(*), root, comm, intercomm
INTEGER :: array_of_errcodes(*), ierror
END SUBROUTINE
SUBROUTINE MPI_INFO_GET_STRING(info, key, buflen, value, flag, ierror)
INTEGER :: info, buflen, ierror
CHARACTER(LEN=*) :: key, value
LOGICAL :: flag
END SUBROUTINE
";

/// MPI_SIZEOF (a generic over the intrinsic types, as module procedures) and
/// MPI_F_SYNC_REG: `(generic declarations, procedure bodies)`. `f08`: ierror
/// optional and buffers assumed-rank.
fn fortran_sizeof(f08: bool) -> (String, String) {
    let kinds: &[(&str, &str)] = &[
        ("integer(kind=1)", "i1"),
        ("integer(kind=2)", "i2"),
        ("integer(kind=4)", "i4"),
        ("integer(kind=8)", "i8"),
        ("real(kind=4)", "r4"),
        ("real(kind=8)", "r8"),
        ("complex(kind=4)", "c4"),
        ("complex(kind=8)", "c8"),
        ("logical(kind=1)", "l1"),
        ("logical(kind=2)", "l2"),
        ("logical(kind=4)", "l4"),
        ("logical(kind=8)", "l8"),
        ("character(len=*)", "ch"),
    ];
    let (dim, ierr, set) = if f08 {
        (
            "dimension(..)",
            "integer, optional, intent(out) :: ierror",
            "if (present(ierror)) ierror = MPI_SUCCESS",
        )
    } else {
        (
            "dimension(*)",
            "integer, intent(out) :: ierror",
            "ierror = MPI_SUCCESS",
        )
    };
    let mut g = String::from("  interface MPI_Sizeof\n");
    let mut b = String::new();
    for (ty, tag) in kinds {
        // Scalars and arrays (assumed-rank covers both in mpi_f08; `mpi` has a scalar and an array form).
        let forms: &[(&str, &str)] = if f08 {
            &[("", dim)]
        } else {
            &[("", ""), ("a", dim)]
        };
        for (suffix, d) in forms {
            let name = format!("oxmpi_sizeof_{tag}{suffix}");
            g.push_str(&format!("    module procedure {name}\n"));
            let decl = if d.is_empty() {
                format!("    {ty}, intent(in) :: x\n")
            } else {
                format!("    {ty}, {d}, intent(in) :: x\n")
            };
            b.push_str(&format!(
                "  subroutine {name}(x, size, ierror)\n{decl}    integer, intent(out) :: size\n    {ierr}\n    size = {}\n    {set}\n  end subroutine\n",
                if *tag == "ch" { "1" } else { "int(storage_size(x) / 8)" }
            ));
        }
    }
    g.push_str("  end interface\n");
    g.push_str(&format!(
        "  interface\n    subroutine oxmpi_f_sync_reg(buf) bind(C, name='oxmpi_f_sync_reg_')\n      type(*), {} :: buf\n    end subroutine\n  end interface\n",
        if f08 { "dimension(..)" } else { "dimension(*)" }
    ));
    // MPI_F_SYNC_REG: a call the compiler cannot see through, so it keeps the
    // buffer in memory around non-blocking operations.
    // And its profiling name.
    for p in ["", "P"] {
        b.push_str(&format!(
            "  subroutine {p}MPI_F_sync_reg(buf)\n    {}\n    call oxmpi_f_sync_reg(buf)\n  end subroutine\n",
            if f08 { "type(*), dimension(..), asynchronous :: buf" } else { "!GCC$ ATTRIBUTES NO_ARG_CHECK :: buf\n    type(*), dimension(*) :: buf" }
        ));
    }
    (g, b)
}

/// Arguments of the `mpi` module's all-to-all-v/w interfaces checked for
/// neither type nor rank, as with `mpif.h`: with MPI_IN_PLACE the send counts,
/// displacements and types are ignored and programs pass scalars (`0`,
/// `MPI_DATATYPE_NULL`) for them; some pass per-process type arrays to the
/// `v` forms. The C side reads them as before.
fn lax_arg(func: &str, param: &str) -> bool {
    let f = func.to_ascii_lowercase();
    (f.contains("alltoallv") || f.contains("alltoallw"))
        && matches!(
            param,
            "sendcounts" | "sdispls" | "sendtype" | "sendtypes" | "recvtype" | "recvtypes"
        )
}

/// The `mpi` module's source: the declarations of `mpif.h` plus an explicit
/// interface for every procedure (choice buffers accept any type and rank).
pub fn fortran_module(abi: &Abi) -> String {
    let mut m = String::new();
    m.push_str("! The `mpi` module of oxmpi. Generated from crates/oxmpi-capi/abi.txt by\n! `cargo xtask dist`; do not edit.\n");
    m.push_str("module mpi\n      implicit none\n");
    m.push_str(&fortran_decls(abi, true));
    m.push_str("\ninterface\n");
    for f in abi.funcs.iter().filter(|f| fortran_relevant(f)) {
        if FORTRAN_BY_HAND.contains(&f.name.as_str()) {
            continue;
        }
        let Ok(ff) = fortran_form(abi, f) else {
            continue;
        };
        let up = f.name.to_ascii_uppercase();
        let mut names: Vec<String> = f.params.iter().map(|p| p.name.clone()).collect();
        if f.ret == "int" {
            if !f.variadic {
                names.push("ierror".into());
            }
            m.push_str(&format!("SUBROUTINE {up}({})\n", names.join(", &\n    ")));
        } else {
            m.push_str(&format!("FUNCTION {up}({})\n", names.join(", &\n    ")));
        }
        m.push_str("IMPORT\n");
        for (p, k) in f.params.iter().zip(&ff.kinds) {
            if lax_arg(&f.name, &p.name) {
                m.push_str(&format!("!GCC$ ATTRIBUTES NO_ARG_CHECK :: {}\n", p.name));
            }
            for d in fortran_dummy(p, k) {
                m.push_str(&d);
                m.push('\n');
            }
        }
        match f.ret.as_str() {
            "int" if f.variadic => m.push_str("END SUBROUTINE\n"),
            "int" => m.push_str("INTEGER :: ierror\nEND SUBROUTINE\n"),
            "double" => m.push_str(&format!("DOUBLE PRECISION :: {up}\nEND FUNCTION\n")),
            _ => m.push_str(&format!(
                "INTEGER(KIND=MPI_ADDRESS_KIND) :: {up}\nEND FUNCTION\n"
            )),
        }
    }
    for block in FORTRAN_BY_HAND_INTERFACES.trim().split("END SUBROUTINE") {
        let block = block.trim();
        if block.is_empty() {
            continue;
        }
        let mut lines = block.lines();
        let head = lines.next().unwrap();
        let fname = head
            .trim_start_matches("SUBROUTINE ")
            .split('(')
            .next()
            .unwrap();
        if !abi.funcs.iter().any(|f| f.name.eq_ignore_ascii_case(fname)) {
            continue;
        }
        m.push_str(head);
        // A heading continued over several lines (`&`) ends before IMPORT.
        let mut continued = head.trim_end().ends_with('&');
        while continued {
            let Some(l) = lines.next() else { break };
            m.push('\n');
            m.push_str(l);
            continued = l.trim_end().ends_with('&');
        }
        m.push_str("\nIMPORT\n");
        for l in lines {
            m.push_str(l);
            m.push('\n');
        }
        m.push_str("END SUBROUTINE\n");
    }
    // The profiling names of the two functions (`mpif.h` declares them too).
    for n in ["PMPI_WTIME", "PMPI_WTICK"] {
        m.push_str(&format!(
            "FUNCTION {n}()\nDOUBLE PRECISION :: {n}\nEND FUNCTION\n"
        ));
    }
    m.push_str("end interface\n");
    let (g, b) = fortran_sizeof(false);
    m.push_str(&g);
    m.push_str("contains\n");
    m.push_str(&b);
    m.push_str("end module mpi\n");
    m
}

/// The handle types of `mpi_f08` (`TYPE(MPI_Comm)`, ...).
const F08_HANDLES: &[&str] = &[
    "MPI_Comm",
    "MPI_Datatype",
    "MPI_Errhandler",
    "MPI_File",
    "MPI_Group",
    "MPI_Info",
    "MPI_Message",
    "MPI_Op",
    "MPI_Request",
    "MPI_Session",
    "MPI_Win",
];

fn f08_handle_of_stem(stem: &str) -> &'static str {
    match stem {
        "Type" => "MPI_Datatype",
        s => F08_HANDLES
            .iter()
            .find(|h| h[4..] == *s)
            .copied()
            .unwrap_or("MPI_Comm"),
    }
}

/// The `mpi_f08` module's source: handle types, typed constants, and a module
/// procedure for every mechanically bound function (optional IERROR, typed
/// handles, `TYPE(*), DIMENSION(..)` buffers handed to `oxmpi_f08_buffer` so
/// array sections work), each calling the `mpif.h` procedure of libmpi.
pub fn fortran_f08_module(abi: &Abi) -> String {
    f08_sources(abi).0
}

/// The sources of `mpi_f08`'s external procedures: `(PMPI_x_f08[ts] doing the
/// work, MPI_x_f08[ts] calling them)`, compiled into separate objects (the
/// second's symbols made weak, so a program's own MPI_Send_f08ts replaces it).
pub fn fortran_f08_procs(abi: &Abi) -> (String, String) {
    let p = f08_sources(abi).1;
    (p.pmpi, p.mpi)
}

fn f08_sources(abi: &Abi) -> (String, F08Procs) {
    let mut m = String::new();
    m.push_str("! The `mpi_f08` module of oxmpi. Generated from crates/oxmpi-capi/abi.txt by\n! `cargo xtask dist`; do not edit.\n");
    // The kinds, handle types and buffer helpers go in a module of their own,
    // which the external procedures (`f08_procs`) use without loading all of mpi_f08.
    m.push_str("module oxmpi_f08_types\n  use, intrinsic :: iso_c_binding, only: c_int, c_intptr_t, c_ptr\n  implicit none\n");
    for (n, v) in [
        ("MPI_ADDRESS_KIND", "8"),
        ("MPI_OFFSET_KIND", "8"),
        ("MPI_COUNT_KIND", "8"),
        ("MPI_INTEGER_KIND", "4"),
        ("MPI_STATUS_SIZE", "8"),
    ] {
        m.push_str(&format!("  integer, parameter :: {n} = {v}\n"));
    }
    m.push_str("  logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .true.\n  logical, parameter :: MPI_ASYNC_PROTECTS_NONBLOCKING = .true.\n");
    for h in F08_HANDLES {
        m.push_str(&format!(
            "  type, bind(C) :: {h}\n    integer :: MPI_VAL\n  end type\n"
        ));
    }
    m.push_str("  type, bind(C) :: MPI_Status\n    integer :: MPI_SOURCE, MPI_TAG, MPI_ERROR\n    integer :: MPI_internal(5)\n  end type\n");
    m.push_str("  interface\n    subroutine oxmpi_f08_buffer(buf, count, datatype, per_process, addr, newcount, newtype, freetype, ierr) &\n        bind(C, name='oxmpi_f08_buffer')\n      import :: c_int, c_intptr_t\n      type(*), dimension(..) :: buf\n      integer(c_int) :: count, datatype, per_process, newcount, newtype, freetype, ierr\n      integer(c_intptr_t) :: addr\n    end subroutine\n  end interface\n");
    m.push_str("  interface\n    subroutine oxmpi_f08_copyin(buf, addr, tmp) bind(C, name='oxmpi_f08_copyin')\n      import :: c_intptr_t\n      type(*), dimension(..) :: buf\n      integer(c_intptr_t) :: addr, tmp\n    end subroutine\n    subroutine oxmpi_f08_copyout(buf, tmp) bind(C, name='oxmpi_f08_copyout')\n      import :: c_intptr_t\n      type(*), dimension(..) :: buf\n      integer(c_intptr_t) :: tmp\n    end subroutine\n  end interface\n");
    m.push_str(
        "end module oxmpi_f08_types\n\nmodule mpi_f08\n  use oxmpi_f08_types\n  implicit none\n",
    );
    for c in &abi.consts {
        if c.name.starts_with("MPI_F_") {
            continue;
        }
        let d = const_value(abi, c);
        let Some(v) = fortran_int(match d.ctype.as_str() {
            "int" | "MPI_Offset" => &d.value,
            t if is_handle_type(t) => &d.value,
            _ => continue,
        }) else {
            continue;
        };
        match d.ctype.as_str() {
            "int" => m.push_str(&format!("  integer, parameter :: {} = {v}\n", c.name)),
            "MPI_Offset" => m.push_str(&format!(
                "  integer(kind=MPI_OFFSET_KIND), parameter :: {} = {v}\n",
                c.name
            )),
            t => m.push_str(&format!(
                "  type({t}), parameter :: {} = {t}({v})\n",
                c.name
            )),
        }
    }
    for (n, dims, block) in FORTRAN_SENTINELS {
        let ty = if n.starts_with("MPI_STATUS") {
            "type(MPI_Status)"
        } else {
            "integer"
        };
        let dims = match *dims {
            "(MPI_STATUS_SIZE)" => "",
            "(MPI_STATUS_SIZE,1)" => "(1)",
            d => d,
        };
        m.push_str(&format!("  {ty} :: {n}{dims}\n  common /{block}/ {n}\n"));
    }
    m.push_str(
        "  character(len=1) :: MPI_ARGV_NULL(1)\n  common /MPI_FORTRAN_ARGV_NULL/ MPI_ARGV_NULL\n",
    );
    m.push_str("  character(len=1) :: MPI_ARGVS_NULL(1,1)\n  common /MPI_FORTRAN_ARGVS_NULL/ MPI_ARGVS_NULL\n");
    m.push_str("  external :: MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN\n");
    m.push_str("  external :: MPI_TYPE_NULL_COPY_FN, MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN\n");
    m.push_str("  external :: MPI_WIN_NULL_COPY_FN, MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN\n");
    // The error handler procedures' abstract interfaces (`PROCEDURE(MPI_File_errhandler_function)`).
    for (h, obj) in [
        ("Comm", "comm"),
        ("Win", "win"),
        ("File", "file"),
        ("Session", "session"),
    ] {
        m.push_str(&format!(
            "  abstract interface\n    subroutine MPI_{h}_errhandler_function({obj}, error_code)\n      import :: MPI_{h}\n      type(MPI_{h}) :: {obj}\n      integer :: error_code\n    end subroutine\n  end interface\n"
        ));
    }
    m.push_str("  interface operator(==)\n");
    for h in F08_HANDLES {
        m.push_str(&format!("    module procedure oxmpi_eq_{}\n", &h[4..]));
    }
    m.push_str("  end interface\n  interface operator(/=)\n");
    for h in F08_HANDLES {
        m.push_str(&format!("    module procedure oxmpi_ne_{}\n", &h[4..]));
    }
    m.push_str("  end interface\n");
    // Procedures.
    let mut generics = String::new();
    // Each procedure becomes two external procedures with the standard's specific
    // names (`PMPI_Send_f08ts` doing the work, `MPI_Send_f08ts` calling it, so a
    // profiling layer can replace the latter), declared by interface bodies in the
    // generics `MPI_Send` and `PMPI_Send`; `procs` collects their definitions.
    let mut procs = F08Procs::default();
    let emit = |generics: &mut String, procs: &mut F08Procs, name: &str, body: String| {
        f08_emit(generics, procs, name, &body);
    };
    emit(&mut generics, &mut procs, "MPI_Init", "  subroutine MPI_Init_f08(ierror)\n    integer, optional, intent(out) :: ierror\n    integer :: ierr0\n    call pmpi_init(ierr0)\n    if (present(ierror)) ierror = ierr0\n  end subroutine\n".into());
    emit(&mut generics, &mut procs, "MPI_Init_thread", "  subroutine MPI_Init_thread_f08(required, provided, ierror)\n    integer, intent(in) :: required\n    integer, intent(out) :: provided\n    integer, optional, intent(out) :: ierror\n    integer :: ierr0\n    call pmpi_init_thread(required, provided, ierr0)\n    if (present(ierror)) ierror = ierr0\n  end subroutine\n".into());
    // Procedures with callbacks or attribute values: the same Fortran ABI as
    // `mpif.h` (TYPE(MPI_x) is an INTEGER by reference), so they pass through.
    for (name, dummies, call) in [
        ("MPI_Op_create", "    external :: user_fn\n    logical, intent(in) :: commute\n    type(MPI_Op), intent(out) :: op\n", "user_fn, commute, op%MPI_VAL"),
        ("MPI_Comm_create_errhandler", "    external :: comm_errhandler_fn\n    type(MPI_Errhandler), intent(out) :: errhandler\n", "comm_errhandler_fn, errhandler%MPI_VAL"),
        ("MPI_Win_create_errhandler", "    external :: win_errhandler_fn\n    type(MPI_Errhandler), intent(out) :: errhandler\n", "win_errhandler_fn, errhandler%MPI_VAL"),
        ("MPI_File_create_errhandler", "    external :: file_errhandler_fn\n    type(MPI_Errhandler), intent(out) :: errhandler\n", "file_errhandler_fn, errhandler%MPI_VAL"),
        ("MPI_Comm_create_keyval", "    external :: comm_copy_attr_fn, comm_delete_attr_fn\n    integer, intent(out) :: comm_keyval\n    integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state\n", "comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state"),
        ("MPI_Type_create_keyval", "    external :: type_copy_attr_fn, type_delete_attr_fn\n    integer, intent(out) :: type_keyval\n    integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state\n", "type_copy_attr_fn, type_delete_attr_fn, type_keyval, extra_state"),
        ("MPI_Win_create_keyval", "    external :: win_copy_attr_fn, win_delete_attr_fn\n    integer, intent(out) :: win_keyval\n    integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state\n", "win_copy_attr_fn, win_delete_attr_fn, win_keyval, extra_state"),
        ("MPI_Win_set_attr", "    type(MPI_Win), intent(in) :: win\n    integer, intent(in) :: win_keyval\n    integer(kind=MPI_ADDRESS_KIND), intent(in) :: attribute_val\n", "win%MPI_VAL, win_keyval, attribute_val"),
        ("MPI_Win_get_attr", "    type(MPI_Win), intent(in) :: win\n    integer, intent(in) :: win_keyval\n    integer(kind=MPI_ADDRESS_KIND), intent(out) :: attribute_val\n    logical, intent(out) :: flag\n", "win%MPI_VAL, win_keyval, attribute_val, flag"),
        ("MPI_Grequest_start", "    external :: query_fn, free_fn, cancel_fn\n    integer(kind=MPI_ADDRESS_KIND), intent(in) :: extra_state\n    type(MPI_Request), intent(out) :: request\n", "query_fn, free_fn, cancel_fn, extra_state, request%MPI_VAL"),
        ("MPI_Info_create_env", "    type(MPI_Info), intent(out) :: info\n", "info%MPI_VAL"),
        ("MPI_Comm_spawn", "    character(len=*), intent(in) :: command, argv(*)\n    integer, intent(in) :: maxprocs, root\n    type(MPI_Info), intent(in) :: info\n    type(MPI_Comm), intent(in) :: comm\n    type(MPI_Comm), intent(out) :: intercomm\n    integer :: array_of_errcodes(*)\n", "command, argv, maxprocs, info%MPI_VAL, root, comm%MPI_VAL, intercomm%MPI_VAL, array_of_errcodes"),
        ("MPI_Comm_spawn_multiple", "    integer, intent(in) :: count\n    character(len=*), intent(in) :: array_of_commands(*), array_of_argv(count, *)\n    integer, intent(in) :: array_of_maxprocs(*)\n    type(MPI_Info), intent(in) :: array_of_info(*)\n    integer, intent(in) :: root\n    type(MPI_Comm), intent(in) :: comm\n    type(MPI_Comm), intent(out) :: intercomm\n    integer :: array_of_errcodes(*)\n", "count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info, root, comm%MPI_VAL, intercomm%MPI_VAL, array_of_errcodes"),
        ("MPI_Comm_set_attr", "    type(MPI_Comm), intent(in) :: comm\n    integer, intent(in) :: comm_keyval\n    integer(kind=MPI_ADDRESS_KIND), intent(in) :: attribute_val\n", "comm%MPI_VAL, comm_keyval, attribute_val"),
        ("MPI_Comm_get_attr", "    type(MPI_Comm), intent(in) :: comm\n    integer, intent(in) :: comm_keyval\n    integer(kind=MPI_ADDRESS_KIND), intent(out) :: attribute_val\n    logical, intent(out) :: flag\n", "comm%MPI_VAL, comm_keyval, attribute_val, flag"),
        ("MPI_Type_set_attr", "    type(MPI_Datatype), intent(in) :: datatype\n    integer, intent(in) :: type_keyval\n    integer(kind=MPI_ADDRESS_KIND), intent(in) :: attribute_val\n", "datatype%MPI_VAL, type_keyval, attribute_val"),
        ("MPI_Type_get_attr", "    type(MPI_Datatype), intent(in) :: datatype\n    integer, intent(in) :: type_keyval\n    integer(kind=MPI_ADDRESS_KIND), intent(out) :: attribute_val\n    logical, intent(out) :: flag\n", "datatype%MPI_VAL, type_keyval, attribute_val, flag"),
    ] {
        if !abi.funcs.iter().any(|f| f.name == name) {
            continue;
        }
        let args: Vec<&str> = call.split(", ").map(|a| a.split('%').next().unwrap()).collect();
        emit(
            &mut generics,
            &mut procs,
            name,
            format!(
                "  subroutine {name}_f08({}, ierror)\n{dummies}    integer, optional, intent(out) :: ierror\n    integer :: ierr0\n    call p{}({}, ierr0)\n    if (present(ierror)) ierror = ierr0\n  end subroutine\n",
                args.join(", &\n      "),
                name.to_ascii_lowercase(),
                call.replace(", ", ", &\n      ")
            ),
        );
    }
    for f in abi
        .funcs
        .iter()
        .filter(|f| fortran_relevant(f) || is_large_count(f))
    {
        if FORTRAN_BY_HAND.contains(&f.name.as_str()) {
            continue;
        }
        let Ok(ff) = fortran_form(abi, f) else {
            continue;
        };
        if is_large_count(f) {
            // Only where the generic can tell it from the `int` form (not, e.g.,
            // MPI_Type_get_extent_c: MPI_Count and MPI_Aint are both 8 bytes).
            let base = &f.name[..f.name.len() - 2];
            let Some(b) = abi.funcs.iter().find(|g| g.name == base) else {
                continue;
            };
            let Ok(bf) = fortran_form(abi, b) else {
                continue;
            };
            if FORTRAN_BY_HAND.contains(&base) || integer_kinds(f, &ff) == integer_kinds(b, &bf) {
                continue;
            }
        }
        let mut dummies = String::new();
        let mut pre = String::new();
        let mut post = String::new();
        let mut args = vec![];
        let mut locals = String::new();
        let n_params = f.params.len();
        let mut i = 0;
        while i < n_params {
            let p = &f.params[i];
            let k = &ff.kinds[i];
            let n = &p.name;
            match k {
                FKind::Buf if n == "baseptr" => {
                    // MPI_ALLOC_MEM, MPI_WIN_ALLOCATE & co.: the memory's address as TYPE(C_PTR).
                    dummies.push_str("    type(c_ptr), intent(out) :: baseptr\n");
                    args.push(n.clone());
                }
                FKind::Buf => {
                    // (sendbuf, recvbuf, count, datatype): both buffers share one
                    // count and datatype, so neither gets a datatype of its own.
                    let paired = (i == 0 || ff.kinds[i - 1] != FKind::Buf)
                        && i + 2 < n_params
                        && ff.kinds[i + 1] == FKind::IntVal
                        && f.params[i + 1].name.contains("count")
                        && ff.kinds[i + 2] == FKind::HandleVal("Type".into());
                    // As the standard declares them (a profiling layer's own
                    // MPI_Send_f08ts copies these): INTENT(IN) for what the call
                    // only reads, ASYNCHRONOUS where the buffer outlives the call.
                    let intent = if p.ctype.starts_with("const") {
                        ", intent(in)"
                    } else {
                        ""
                    };
                    let stem = f.name.trim_end_matches("_c");
                    let lasting = f.params.iter().any(|q| q.name == "request")
                        || [
                            "MPI_Win_",
                            "MPI_Put",
                            "MPI_Get",
                            "MPI_Accumulate",
                            "MPI_Fetch_and_op",
                            "MPI_Compare_and_swap",
                            "MPI_Free_mem",
                        ]
                        .iter()
                        .any(|x| stem.starts_with(x))
                        || stem.ends_with("_begin")
                        || stem.ends_with("_end")
                        || stem.contains("attach")
                        || stem.contains("detach");
                    let asynchronous = if lasting { ", asynchronous" } else { "" };
                    dummies.push_str(&format!(
                        "    type(*), dimension(..){intent}{asynchronous} :: {n}\n"
                    ));
                    locals.push_str(&format!(
                        "    integer(c_intptr_t) :: a_{n}\n    integer :: c_{n}, t_{n}, f_{n}\n"
                    ));
                    // Counts per process (gather, scatter, alltoall, neighbour
                    // collectives) on the buffer of the side that has several.
                    let lname = f.name.to_ascii_lowercase();
                    let per_process = (lname.contains("gather") && n.starts_with("recv"))
                        || (lname.contains("scatter")
                            && !lname.contains("reduce")
                            && n.starts_with("send"))
                        || lname.contains("alltoall")
                        || lname.contains("neighbor");
                    let blocking = !f.params.iter().any(|q| q.name == "request");
                    if paired && per_process && blocking {
                        // Copied in and out: any section works.
                        locals.push_str(&format!("    integer(c_intptr_t) :: x_{n}\n"));
                        pre.push_str(&format!("    call oxmpi_f08_copyin({n}, a_{n}, x_{n})\n"));
                        post.push_str(&format!("    call oxmpi_f08_copyout({n}, x_{n})\n"));
                        args.push(format!("%VAL(a_{n})"));
                        i += 1;
                        continue;
                    }
                    if paired {
                        let (cn, tn) = (&f.params[i + 1].name, &f.params[i + 2].name);
                        dummies.push_str(&format!("    integer, intent(in) :: {cn}\n    type(MPI_Datatype), intent(in) :: {tn}\n"));
                        pre.push_str(&format!("    call oxmpi_f08_buffer({n}, {cn}, {tn}%MPI_VAL, {}, a_{n}, c_{n}, t_{n}, f_{n}, ierr0)\n    if (ierr0 /= 0) goto 9\n", per_process as i32));
                        post.push_str(&format!(
                            "    if (f_{n} /= 0) call pmpi_type_free(t_{n}, ierr1)\n"
                        ));
                        args.push(format!("%VAL(a_{n})"));
                        args.push(format!("c_{n}"));
                        args.push(format!("t_{n}"));
                        i += 3;
                        continue;
                    }
                    if f.params.iter().any(|q| q.name == "request") {
                        // Non-blocking: the buffer must outlive the call, so a
                        // section must be contiguous (MPI_ERR_UNSUPPORTED_OPERATION otherwise).
                        pre.push_str(&format!("    call oxmpi_f08_buffer({n}, -1, 0, 0, a_{n}, c_{n}, t_{n}, f_{n}, ierr0)\n    if (ierr0 /= 0) goto 9\n"));
                    } else {
                        locals.push_str(&format!("    integer(c_intptr_t) :: x_{n}\n"));
                        pre.push_str(&format!("    call oxmpi_f08_copyin({n}, a_{n}, x_{n})\n"));
                        post.push_str(&format!("    call oxmpi_f08_copyout({n}, x_{n})\n"));
                    }
                    args.push(format!("%VAL(a_{n})"));
                }
                FKind::HandleVal(stem) => {
                    dummies.push_str(&format!(
                        "    type({}), intent(in) :: {n}\n",
                        f08_handle_of_stem(stem)
                    ));
                    args.push(format!("{n}%MPI_VAL"));
                }
                FKind::HandlePtr(stem) => {
                    dummies.push_str(&format!("    type({}) :: {n}\n", f08_handle_of_stem(stem)));
                    args.push(format!("{n}%MPI_VAL"));
                }
                FKind::HandleArr(stem, _) => {
                    dummies.push_str(&format!(
                        "    type({}) :: {n}(*)\n",
                        f08_handle_of_stem(stem)
                    ));
                    args.push(n.clone());
                }
                FKind::Status => {
                    dummies.push_str(&format!("    type(MPI_Status) :: {n}\n"));
                    args.push(n.clone());
                }
                FKind::Statuses => {
                    dummies.push_str(&format!("    type(MPI_Status) :: {n}(*)\n"));
                    args.push(n.clone());
                }
                FKind::IntVal | FKind::WideVal(_) => {
                    for d in fortran_dummy(p, k) {
                        dummies
                            .push_str(&format!("    {}\n", d.replace(" :: ", ", intent(in) :: ")));
                    }
                    args.push(n.clone());
                }
                _ => {
                    for d in fortran_dummy(p, k) {
                        dummies.push_str(&format!("    {d}\n"));
                    }
                    args.push(n.clone());
                }
            }
            i += 1;
        }
        let names: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
        let lower = f.name.to_ascii_lowercase();
        let body = if f.ret == "int" && f.variadic {
            format!(
                "  subroutine {}_f08({})\n{dummies}    call p{lower}({})\n  end subroutine\n",
                f.name,
                names.join(", "),
                args.join(", ")
            )
        } else if f.ret == "int" {
            let mut all = names.clone();
            all.push("ierror");
            args.push("ierr0".into());
            format!(
                "  subroutine {}_f08({})\n{dummies}    integer, optional, intent(out) :: ierror\n    integer :: ierr0, ierr1\n{locals}{pre}    call p{lower}({})\n{post}9   if (present(ierror)) ierror = ierr0\n  end subroutine\n",
                f.name,
                all.join(", &\n      "),
                args.join(", &\n      ")
            )
        } else {
            let ty = if f.ret == "double" {
                "double precision"
            } else {
                "integer(kind=MPI_ADDRESS_KIND)"
            };
            format!(
                "  function {}_f08({}) result(r)\n{dummies}    {ty} :: r\n    {ty}, external :: p{lower}\n    r = p{lower}({})\n  end function\n",
                f.name,
                names.join(", "),
                args.join(", ")
            )
        };
        emit(&mut generics, &mut procs, &f.name, body);
    }
    m.push_str(&generics);
    m.push_str(&fortran_sizeof(true).0);
    m.push_str("contains\n");
    for h in F08_HANDLES {
        let s = &h[4..];
        m.push_str(&format!(
            "  elemental logical function oxmpi_eq_{s}(a, b)\n    type({h}), intent(in) :: a, b\n    oxmpi_eq_{s} = a%MPI_VAL == b%MPI_VAL\n  end function\n  elemental logical function oxmpi_ne_{s}(a, b)\n    type({h}), intent(in) :: a, b\n    oxmpi_ne_{s} = a%MPI_VAL /= b%MPI_VAL\n  end function\n"
        ));
    }
    m.push_str(&fortran_sizeof(true).1);
    m.push_str("end module mpi_f08\n");
    (m, procs)
}

/// The external procedures of `mpi_f08` (see `f08_emit`).
#[derive(Default)]
struct F08Procs {
    pmpi: String,
    mpi: String,
}

/// Declares `body` (a procedure named `{name}_f08`, its dummies declared before
/// its locals) under the standard's specific names: the generic `{generic}`
/// gets an interface body for the external `{name}_f08ts` (a procedure with a
/// choice buffer) or `{name}_f08`, the generic `P{generic}` one for its `PMPI_`
/// twin; `procs` gets the twin (the body itself) and the `MPI_` procedure
/// calling it.
fn f08_emit(generics: &mut String, procs: &mut F08Procs, name: &str, body: &str) {
    // `MPI_Send_c` overloads the generic `MPI_Send`.
    let generic = name.strip_suffix("_c").unwrap_or(name);
    let mut lines = body.lines();
    // The heading, continued over lines ending in `&`.
    let mut head = String::new();
    for l in lines.by_ref() {
        head.push_str(l.trim().trim_end_matches('&'));
        if !l.trim_end().ends_with('&') {
            break;
        }
    }
    let head = head.trim();
    let func = head.starts_with("function");
    let open = head.find('(').unwrap();
    let close = head[open..].find(')').unwrap() + open;
    let args: Vec<&str> = head[open + 1..close]
        .split(',')
        .map(|a| a.trim().trim_end_matches('&').trim())
        .filter(|a| !a.is_empty())
        .collect();
    // A dummy's declaration names only dummies (or the result `r`).
    let (mut dummies, mut rest) = (String::new(), String::new());
    for l in lines {
        let t = l.trim();
        if t.starts_with("end subroutine") || t.starts_with("end function") {
            break;
        }
        let declared = t.split_once("::").map(|(_, names)| {
            let mut depth = 0;
            let mut cur = String::new();
            let mut all = vec![];
            for c in names.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    ',' if depth == 0 => all.push(std::mem::take(&mut cur)),
                    _ if depth == 0 => cur.push(c),
                    _ => {}
                }
            }
            all.push(cur);
            all.iter()
                .all(|n| args.contains(&n.trim()) || n.trim() == "r")
        });
        if declared == Some(true) {
            dummies.push_str(&format!("    {t}\n"));
        } else {
            rest.push_str(&format!("    {t}\n"));
        }
    }
    let suffix = if dummies.contains("type(*)") {
        "_f08ts"
    } else {
        "_f08"
    };
    let (kind, tail) = if func {
        ("function", " result(r)")
    } else {
        ("subroutine", "")
    };
    let arglist = args.join(", &\n      ");
    let uses = "    use oxmpi_f08_types\n    implicit none\n";
    let iface = |p: &str| {
        let inner: String = format!("{uses}{dummies}")
            .lines()
            .map(|l| format!("  {l}\n"))
            .collect();
        format!("    {kind} {p}{name}{suffix}({arglist}){tail}\n{inner}    end {kind}\n")
    };
    generics.push_str(&format!(
        "  interface {generic}\n{}  end interface\n",
        iface("")
    ));
    generics.push_str(&format!(
        "  interface P{generic}\n{}  end interface\n",
        iface("P")
    ));
    procs.pmpi.push_str(&format!(
        "{kind} P{name}{suffix}({arglist}){tail}\n{uses}{dummies}{rest}end {kind}\n"
    ));
    let call = if func {
        format!("    r = P{name}{suffix}({arglist})\n")
    } else {
        format!("    call P{name}{suffix}({arglist})\n")
    };
    procs.mpi.push_str(&format!("{kind} {name}{suffix}({arglist}){tail}\n{uses}{dummies}  interface\n{}  end interface\n{call}end {kind}\n", iface("P")));
}
