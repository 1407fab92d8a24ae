//! Links libpolyhal: from the folder named by POLYHAL_LIB_DIR (a build tree's `lib/`), with
//! that folder as the RPATH of the programs built here so that they run without
//! LD_LIBRARY_PATH; unset, from where the system linker and loader look (an installed polyhal).

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=POLYHAL_LIB_DIR");
    let dir = match env::var_os("POLYHAL_LIB_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => return,
    };
    let dir = dir.canonicalize().unwrap_or_else(|error| {
        panic!("POLYHAL_LIB_DIR={}: {}", dir.display(), error);
    });
    if !dir.join("libpolyhal.so").exists() {
        panic!("POLYHAL_LIB_DIR={} holds no libpolyhal.so", dir.display());
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
}
