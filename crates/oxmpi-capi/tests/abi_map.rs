//! The standard ABI's values of the engine's enums come from abi.txt alone: the map
//! `build.rs` generates (`gen::rust_abi_map`) gives every predefined datatype, operation,
//! comparison result, topology kind, split type, combiner, thread level and error class
//! the engine has the value abi.txt names it by,
//! distinct, and back.

use std::collections::HashSet;

use mpi::abi::*;
use oxmpi_core::comm::create::SplitType;
use oxmpi_core::datatype::Combiner;
use oxmpi_core::datatype::Primitive;
use oxmpi_core::group::Comparison;
use oxmpi_core::op::PredefinedOp;
use oxmpi_core::runtime::ThreadLevel;
use oxmpi_core::topo::TopologyKind;

/// `NAME -> value` of abi.txt's `const`/`ext` lines of `ctype` (aliases followed), read
/// here independently of the generator.
fn abi_txt(ctype: &str) -> Vec<(String, i64)> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/abi.txt")).unwrap();
    let lines: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("const ") || l.starts_with("ext "))
        .map(|l| l.split_whitespace().skip(1).collect())
        .collect();
    let value = |v: &str| -> Option<i64> {
        v.strip_prefix("0x")
            .map_or_else(|| v.parse().ok(), |h| i64::from_str_radix(h, 16).ok())
    };
    let mut out = vec![];
    for f in &lines {
        if f[1] == ctype {
            out.push((f[0].to_string(), value(f[2]).unwrap()));
        } else if f[1] == "alias" {
            if let Some(t) = lines.iter().find(|t| t[0] == f[2] && t[1] == ctype) {
                out.push((f[0].to_string(), value(t[2]).unwrap()));
            }
        }
    }
    out
}

fn named(table: &[(String, i64)], name: &str) -> i64 {
    table
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("abi.txt has no {name}"))
        .1
}

#[test]
fn every_predefined_datatype_has_its_abi_handle() {
    let table = abi_txt("MPI_Datatype");
    let mut seen = HashSet::new();
    for &p in Primitive::ALL {
        let h = primitive_handle(p);
        assert_eq!(h as i64, named(&table, p.name()), "{}", p.name());
        assert_ne!(h, MPI_DATATYPE_NULL, "{}", p.name());
        assert!(seen.insert(h), "{} shares its handle", p.name());
        assert_eq!(primitive_from_handle(h), Some(p), "{}", p.name());
    }
    // The generated constants agree, and an alias maps too.
    assert_eq!(primitive_handle(Primitive::Int), MPI_INT);
    assert_eq!(
        primitive_from_handle(MPI_C_FLOAT_COMPLEX),
        Some(Primitive::CFloatComplex)
    );
    assert_eq!(
        primitive_from_handle(MPI_C_COMPLEX),
        Some(Primitive::CFloatComplex)
    );
    assert_eq!(primitive_from_handle(MPI_DATATYPE_NULL), None);
    assert_eq!(primitive_from_handle(MPI_LB), None);
    assert_eq!(primitive_from_handle(0x1234_5678), None);
}

#[test]
fn every_predefined_op_has_its_abi_handle() {
    let table = abi_txt("MPI_Op");
    let mut seen = HashSet::new();
    for &o in PredefinedOp::ALL {
        let h = op_handle(o);
        assert_eq!(h as i64, named(&table, o.name()), "{}", o.name());
        assert!(seen.insert(h), "{} shares its handle", o.name());
        assert_eq!(op_from_handle(h), Some(o));
    }
    assert_eq!(
        (
            op_handle(PredefinedOp::Sum),
            op_handle(PredefinedOp::Maxloc)
        ),
        (MPI_SUM, MPI_MAXLOC)
    );
    assert_eq!(op_from_handle(MPI_OP_NULL), None);
    assert_eq!(op_from_handle(MPI_DATATYPE_NULL), None);
}

#[test]
fn comparisons_and_topology_kinds_have_their_abi_values() {
    let table = abi_txt("int");
    for &c in Comparison::ALL {
        assert_eq!(i64::from(comparison_value(c)), named(&table, c.name()));
        assert_eq!(comparison_from_value(comparison_value(c)), Some(c));
    }
    assert_eq!(comparison_value(Comparison::Ident), MPI_IDENT);
    assert_eq!(comparison_value(Comparison::Unequal), MPI_UNEQUAL);
    for &k in TopologyKind::ALL {
        assert_eq!(i64::from(topology_kind_value(k)), named(&table, k.name()));
        assert_eq!(topology_kind_from_value(topology_kind_value(k)), Some(k));
    }
    assert_eq!(topology_kind_value(TopologyKind::DistGraph), MPI_DIST_GRAPH);
    assert_eq!(topology_kind_from_value(MPI_UNDEFINED), None);
    for &t in SplitType::ALL {
        assert_eq!(i64::from(split_type_value(t)), named(&table, t.name()));
        assert_eq!(split_type_from_value(split_type_value(t)), Some(t));
    }
    assert_eq!(split_type_value(SplitType::Shared), MPI_COMM_TYPE_SHARED);
    assert_eq!(split_type_from_value(MPI_UNDEFINED), None);
    for &c in Combiner::ALL {
        assert_eq!(i64::from(combiner_value(c)), named(&table, c.name()));
        assert_eq!(combiner_from_value(combiner_value(c)), Some(c));
    }
    assert_eq!(combiner_value(Combiner::Resized), MPI_COMBINER_RESIZED);
    for &l in ThreadLevel::ALL {
        assert_eq!(i64::from(thread_level_value(l)), named(&table, l.name()));
        assert_eq!(thread_level_from_value(thread_level_value(l)), Some(l));
    }
    assert_eq!(
        thread_level_value(ThreadLevel::Multiple),
        MPI_THREAD_MULTIPLE
    );
    assert_eq!(thread_level_from_value(MPI_THREAD_SINGLE + 1), None);
    let mut seen = HashSet::new();
    for &c in oxmpi_core::ErrorClass::ALL {
        let v = error_class_value(c);
        assert_eq!(i64::from(v), named(&table, c.name()), "{}", c.name());
        assert!(seen.insert(v), "{} shares its value", c.name());
        assert_eq!(error_class_from_value(v), Some(c));
    }
    assert_eq!(
        error_class_value(oxmpi_core::ErrorClass::Success),
        MPI_SUCCESS
    );
    assert_eq!(
        error_class_value(oxmpi_core::ErrorClass::Truncate),
        MPI_ERR_TRUNCATE
    );
    assert_eq!(error_class_from_value(MPI_ERR_LASTCODE), None);
}

/// The numbers core shares with C programs unchanged (a rank or tag argument's
/// sentinels, and the predefined attribute keys, which share the keyval space
/// with user keyvals) are the values abi.txt gives them: the C layer passes
/// them through without a mapping, so this test is what keeps the two agreeing.
#[test]
fn numbers_core_shares_with_c_are_abi_txt_values() {
    use oxmpi_core::attr;
    let t = abi_txt("int");
    let shared: [(&str, i32); 12] = [
        ("MPI_ANY_SOURCE", oxmpi_core::matching::ANY_SOURCE),
        ("MPI_ANY_TAG", oxmpi_core::matching::ANY_TAG),
        ("MPI_PROC_NULL", oxmpi_core::request::PROC_NULL),
        ("MPI_ROOT", oxmpi_core::coll::inter::ROOT),
        ("MPI_KEYVAL_INVALID", attr::KEYVAL_INVALID),
        ("MPI_TAG_UB", attr::TAG_UB),
        ("MPI_IO", attr::IO),
        ("MPI_HOST", attr::HOST),
        ("MPI_WTIME_IS_GLOBAL", attr::WTIME_IS_GLOBAL),
        ("MPI_APPNUM", attr::APPNUM),
        ("MPI_LASTUSEDCODE", attr::LASTUSEDCODE),
        ("MPI_UNIVERSE_SIZE", attr::UNIVERSE_SIZE),
    ];
    for (name, core) in shared {
        assert_eq!(
            core as i64,
            named(&t, name),
            "core's value of {name} differs from abi.txt's"
        );
    }
    // The generated constants say the same.
    assert_eq!(oxmpi_core::matching::ANY_SOURCE, MPI_ANY_SOURCE);
    assert_eq!(attr::TAG_UB, MPI_TAG_UB);
}
