//! Two rules of the rooms, held by reading the crate's own source (ARCHITECTURE.md, "Who uses
//! whom"): no circle between the modules of the production code, and no production file over
//! [`MAX_LINES`] lines.
//!
//! The modules are found as the compiler finds them, from `lib.rs` along the `mod` lines; a
//! module declared under `#[cfg(test)]` (`turn/tests.rs`, `discovery/tests/`, …) is a test and
//! is read no further, as is every item under a `cfg` that needs `test` inside a production
//! file (its `mod tests { … }`). What a module uses is every path of its production code that
//! starts with `crate::`, `super::`, `self::` or one of its submodules' names — `use` lines,
//! re-exports, paths in code and inside macros alike — taken to the module it names.
//!
//! Every such use counts, but two: a module's use of its own ancestors (a submodule taking the
//! items its room declares for all its parts, `super::SWITCH_VAR`) is inside that room; and a
//! module that only declares submodules and hands their names on (`process/platform/`, the
//! platform chosen at its `mod` lines) is their face, which uses nothing itself. A room's use of
//! its submodules counts, so a circle that runs through a room's `mod.rs` is seen.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use quote::ToTokens;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Item, Meta, Token};

/// The most lines a production file may have; its inline tests are not counted.
const MAX_LINES: usize = 600;

/// Circles that are being removed (issue 38): each the modules of one, as the failure names them.
/// Until then they are let through, and only they; one that is gone must leave this list.
const KNOWN_CIRCLES: &[&[&str]] = &[];

/// Production files over [`MAX_LINES`] that are being split (issue 38); one that is not any more
/// must leave this list.
const KNOWN_LONG: &[&str] = &[];

/// One module of the crate: a file, with the inline modules it holds.
struct Module {
    /// Its path from the crate's root (`["turn", "session"]`).
    path: Vec<String>,
    /// As ARCHITECTURE.md names it: `turn/session.rs`, `discovery/launch/` (a `mod.rs`).
    name: String,
    /// Declared under `#[cfg(test)]` (or inside such a module).
    test: bool,
    /// Lines of production code: the file's, less those of its items under a test `cfg`.
    lines: usize,
    /// Every path of its production code that may name a module, from the crate's root.
    uses: Vec<Vec<String>>,
    /// It declares submodules and hands their names on, and nothing else.
    face: bool,
}

/// The crate's modules, and which file module each module path (inline ones too) is in.
struct Crate {
    modules: Vec<Module>,
    index: BTreeMap<Vec<String>, usize>,
    /// The names production `use` lines bring into a module (`[turn, app_server]` for `use
    /// crate::app_server::{self}` in `turn/`), each with the path it stands for: a path in code
    /// that starts with one is read as that path.
    aliases: BTreeMap<Vec<String>, Vec<String>>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut krate = Crate { modules: Vec::new(), index: BTreeMap::new(), aliases: BTreeMap::new() };
        krate.load(&src.join("lib.rs"), "lib.rs".into(), Vec::new(), src.to_path_buf(), false);
        krate
    }

    /// Reads the module in `file` at `path`, whose submodules' files are in `dir`.
    fn load(&mut self, file: &Path, name: String, path: Vec<String>, dir: PathBuf, test: bool) {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let at = self.modules.len();
        self.index.insert(path.clone(), at);
        let face = ast.items.iter().all(|item| match item {
            Item::Use(_) => true,
            Item::Mod(module) => module.content.is_none(),
            _ => false,
        });
        self.modules.push(Module { path: path.clone(), name, test, lines: 0, uses: Vec::new(), face });
        let mut tests = TestItems::default();
        self.items(ast.items, &path, at, &dir, test, &mut tests);
        let module = &mut self.modules[at];
        module.lines = if test { 0 } else { text.lines().count() - tests.lines.len() };
    }

    fn items(&mut self, items: Vec<Item>, path: &[String], at: usize, dir: &Path, test: bool, tests: &mut TestItems) {
        for mut item in items {
            let gated = test || tests.gated(&item);
            let child = |name: &syn::Ident| [path, &[name.to_string()]].concat();
            match &mut item {
                Item::Mod(module) if module.content.is_none() => {
                    let name = module.ident.to_string();
                    let (file, shown) = match dir.join(format!("{name}.rs")) {
                        file if file.is_file() => (file, format!("{}{name}.rs", self.prefix(at))),
                        _ => (dir.join(&name).join("mod.rs"), format!("{}{name}/", self.prefix(at))),
                    };
                    self.load(&file, shown, child(&module.ident), dir.join(&name), gated);
                }
                // A test module inside a file declares no files the production code has.
                Item::Mod(_) if gated => {}
                Item::Mod(module) => {
                    let inner = child(&module.ident);
                    self.index.insert(inner.clone(), at);
                    let (_, content) = module.content.take().expect("an inline module");
                    self.items(content, &inner, at, &dir.join(module.ident.to_string()), false, tests);
                }
                _ if gated => {}
                _ => {
                    if let Item::Use(used) = &item {
                        aliases(&used.tree, path, None, &mut self.aliases);
                    }
                    tests.visit_item_mut(&mut item);
                    let uses = &mut self.modules[at].uses;
                    scan(item.into_token_stream(), path, uses);
                }
            }
        }
    }

    /// What the names of the modules declared in module `at` start with.
    fn prefix(&self, at: usize) -> String {
        let name = &self.modules[at].name;
        match name.strip_suffix(".rs") {
            Some("lib") => String::new(),
            Some(file) => format!("{file}/"),
            None => name.clone(),
        }
    }

    /// `used`, a path written in `module`, with the name it starts with replaced by the path it
    /// stands for when one of `module`'s own `use` lines brought it (a room's re-export seen from
    /// its submodules stays the room's: a use inside the room).
    fn resolved(&self, module: &Module, used: &[String]) -> Vec<String> {
        let own = |n: usize| n > module.path.len() && used.starts_with(&module.path);
        let alias = (1..=used.len()).rev().filter(|&n| own(n)).find_map(|n| Some((n, self.aliases.get(&used[..n])?)));
        match alias {
            Some((n, path)) => [path.as_slice(), &used[n..]].concat(),
            None => used.to_vec(),
        }
    }

    /// The production modules each production module uses, with the names it takes from each.
    fn uses(&self) -> BTreeMap<usize, BTreeMap<usize, BTreeSet<String>>> {
        let mut graph: BTreeMap<usize, BTreeMap<usize, BTreeSet<String>>> = BTreeMap::new();
        for (from, module) in self.modules.iter().enumerate().filter(|(_, m)| !m.test) {
            graph.entry(from).or_default();
            for used in &module.uses {
                let used = &self.resolved(module, used);
                let Some((len, to)) = (0..=used.len()).rev().find_map(|n| Some((n, *self.index.get(&used[..n])?)))
                else {
                    continue;
                };
                let target = &self.modules[to];
                // Itself and its ancestors (the root holds every module) are inside its room.
                if target.test || module.face || module.path.starts_with(&target.path) {
                    continue;
                }
                let names = graph.entry(from).or_default().entry(to).or_default();
                names.extend(used.get(len).cloned());
            }
        }
        graph
    }
}

/// Finds the items under a test `cfg` nested in production items (a test-only method, field,
/// statement), takes them out, and counts their lines.
#[derive(Default)]
struct TestItems {
    lines: BTreeSet<usize>,
}

impl TestItems {
    /// Whether `node` is under a `cfg` that needs `test`; if so, its lines are the tests'.
    fn gated<T: ToTokens>(&mut self, node: &T) -> bool {
        let tokens: Vec<TokenTree> = node.to_token_stream().into_iter().collect();
        let gated = tokens
            .chunks(2)
            .map_while(|pair| match pair {
                [TokenTree::Punct(hash), TokenTree::Group(group)]
                    if hash.as_char() == '#' && group.delimiter() == Delimiter::Bracket =>
                {
                    Some(group.stream())
                }
                _ => None,
            })
            .filter_map(|attribute| syn::parse2::<Meta>(attribute).ok())
            .any(|meta| match meta {
                Meta::List(cfg) if cfg.path.is_ident("cfg") => cfg.parse_args::<Meta>().is_ok_and(|p| needs_test(&p)),
                _ => false,
            });
        if gated {
            let span = node.span();
            self.lines.extend(span.start().line..=span.end().line);
        }
        gated
    }

    fn keep<T: ToTokens>(&mut self, nodes: &mut Vec<T>) {
        nodes.retain(|node| !self.gated(node));
    }

    fn keep_punctuated<T: ToTokens, P: ToTokens>(&mut self, nodes: &mut Punctuated<T, P>) {
        *nodes = std::mem::take(nodes).into_pairs().filter(|pair| !self.gated(pair.value())).collect();
    }
}

impl VisitMut for TestItems {
    fn visit_item_impl_mut(&mut self, node: &mut syn::ItemImpl) {
        self.keep(&mut node.items);
        visit_mut::visit_item_impl_mut(self, node);
    }

    fn visit_item_trait_mut(&mut self, node: &mut syn::ItemTrait) {
        self.keep(&mut node.items);
        visit_mut::visit_item_trait_mut(self, node);
    }

    fn visit_item_mod_mut(&mut self, node: &mut syn::ItemMod) {
        if let Some((_, items)) = &mut node.content {
            self.keep(items);
        }
        visit_mut::visit_item_mod_mut(self, node);
    }

    fn visit_block_mut(&mut self, node: &mut syn::Block) {
        self.keep(&mut node.stmts);
        visit_mut::visit_block_mut(self, node);
    }

    fn visit_fields_named_mut(&mut self, node: &mut syn::FieldsNamed) {
        self.keep_punctuated(&mut node.named);
        visit_mut::visit_fields_named_mut(self, node);
    }

    fn visit_item_enum_mut(&mut self, node: &mut syn::ItemEnum) {
        self.keep_punctuated(&mut node.variants);
        visit_mut::visit_item_enum_mut(self, node);
    }

    fn visit_expr_match_mut(&mut self, node: &mut syn::ExprMatch) {
        self.keep(&mut node.arms);
        visit_mut::visit_expr_match_mut(self, node);
    }
}

/// Whether a `cfg` predicate holds only under `test`.
fn needs_test(predicate: &Meta) -> bool {
    match predicate {
        Meta::Path(path) => path.is_ident("test"),
        Meta::List(list) => {
            let parts = list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated).unwrap_or_default();
            if list.path.is_ident("all") {
                parts.iter().any(needs_test)
            } else if list.path.is_ident("any") {
                !parts.is_empty() && parts.iter().all(needs_test)
            } else {
                false
            }
        }
        Meta::NameValue(_) => false,
    }
}

/// Every path in `tokens` written in module `at`, from the crate's root: one that starts with
/// `crate::`, `super::` or `self::` as it says, any other as a path below `at` (which names a
/// module only when it starts with a submodule's name); a `use` group (`super::{a::B, c}`) is
/// each of its paths.
fn scan(tokens: TokenStream, at: &[String], found: &mut Vec<Vec<String>>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Group(group) => scan(group.stream(), at, found),
            TokenTree::Ident(start) if path_separator(&trees, i + 1) => {
                // Not the first segment of its path: read with the path it continues.
                let macro_variable =
                    matches!(i.checked_sub(1).map(|j| &trees[j]), Some(TokenTree::Punct(p)) if p.as_char() == '$');
                if macro_variable || i.checked_sub(2).is_some_and(|j| path_separator(&trees, j)) {
                    i += 1;
                    continue;
                }
                let mut base: Vec<String> = match start.to_string().as_str() {
                    "crate" => Vec::new(),
                    "super" | "self" => at.to_vec(),
                    // A name in scope: a submodule's, or anything else (a crate, a type), which
                    // then names no module below this one.
                    name => [at, &[name.to_string()]].concat(),
                };
                if start == "super" {
                    base.pop();
                }
                i = path(&trees, i + 1, base, found);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The names a `use` tree written in module `at` brings into it, each with the path it stands
/// for from the crate's root (`base`: the path so far; a glob brings no name).
fn aliases(
    tree: &syn::UseTree,
    at: &[String],
    base: Option<Vec<String>>,
    found: &mut BTreeMap<Vec<String>, Vec<String>>,
) {
    // The first segment: read as `scan` reads it.
    let step = |name: String| -> Vec<String> {
        match (base.clone(), name.as_str()) {
            (None, "crate") => Vec::new(),
            (None, "self") => at.to_vec(),
            (None, "super") => at[..at.len().saturating_sub(1)].to_vec(),
            (None, _) => [at, &[name]].concat(),
            (Some(mut base), "super") => {
                base.pop();
                base
            }
            (Some(base), _) => [base.as_slice(), &[name]].concat(),
        }
    };
    let mut bring = |name: String, path: Vec<String>| {
        found.insert([at, &[name]].concat(), path);
    };
    match tree {
        syn::UseTree::Path(p) => aliases(&p.tree, at, Some(step(p.ident.to_string())), found),
        syn::UseTree::Name(n) if n.ident == "self" => {
            if let Some(base) = base.clone() {
                if let Some(last) = base.last().cloned() {
                    bring(last, base);
                }
            }
        }
        syn::UseTree::Name(n) => bring(n.ident.to_string(), step(n.ident.to_string())),
        syn::UseTree::Rename(r) if r.ident == "self" => {
            if let Some(base) = base.clone() {
                bring(r.rename.to_string(), base);
            }
        }
        syn::UseTree::Rename(r) => bring(r.rename.to_string(), step(r.ident.to_string())),
        syn::UseTree::Group(g) => g.items.iter().for_each(|tree| aliases(tree, at, base.clone(), found)),
        syn::UseTree::Glob(_) => {}
    }
}

/// Reads the rest of a path from `trees[i]` (at a `::`) onto `base`; the index after it.
fn path(trees: &[TokenTree], mut i: usize, mut base: Vec<String>, found: &mut Vec<Vec<String>>) -> usize {
    while path_separator(trees, i) {
        match trees.get(i + 2) {
            Some(TokenTree::Ident(segment)) if segment == "super" => {
                base.pop();
            }
            Some(TokenTree::Ident(segment)) => base.push(segment.to_string()),
            Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => {
                let parts: Vec<TokenTree> = group.stream().into_iter().collect();
                for part in parts.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')) {
                    match part.first() {
                        Some(TokenTree::Ident(first)) if first == "self" => {
                            found.push(base.clone());
                        }
                        Some(TokenTree::Ident(first)) => {
                            let mut inner = base.clone();
                            inner.push(first.to_string());
                            path(part, 1, inner, found);
                        }
                        Some(TokenTree::Group(_)) => {
                            path(&[[sep(), sep()].as_slice(), part].concat(), 0, base.clone(), found);
                        }
                        _ => {}
                    }
                }
                return i + 3;
            }
            _ => break,
        }
        i += 3;
    }
    found.push(base);
    i
}

fn sep() -> TokenTree {
    TokenTree::Punct(proc_macro2::Punct::new(':', Spacing::Joint))
}

/// Whether `trees[i..]` starts with `::`.
fn path_separator(trees: &[TokenTree], i: usize) -> bool {
    matches!(
        (trees.get(i), trees.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// The strongly connected parts of `graph` with more than one module (Tarjan's algorithm).
fn circles(graph: &BTreeMap<usize, BTreeMap<usize, BTreeSet<String>>>) -> Vec<Vec<usize>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<usize, BTreeMap<usize, BTreeSet<String>>>,
        next: usize,
        order: BTreeMap<usize, (usize, usize)>,
        stack: Vec<usize>,
        on_stack: BTreeSet<usize>,
        found: Vec<Vec<usize>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, node: usize) {
            self.order.insert(node, (self.next, self.next));
            self.next += 1;
            self.stack.push(node);
            self.on_stack.insert(node);
            for &to in self.graph.get(&node).into_iter().flat_map(BTreeMap::keys) {
                if !self.order.contains_key(&to) {
                    self.visit(to);
                    let low = self.order[&to].1.min(self.order[&node].1);
                    self.order.get_mut(&node).expect("visited").1 = low;
                } else if self.on_stack.contains(&to) {
                    let low = self.order[&to].0.min(self.order[&node].1);
                    self.order.get_mut(&node).expect("visited").1 = low;
                }
            }
            let (index, low) = self.order[&node];
            if index == low {
                let mut part = Vec::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack.remove(&member);
                    part.push(member);
                    if member == node {
                        break;
                    }
                }
                if part.len() > 1 {
                    part.sort_unstable();
                    self.found.push(part);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        next: 0,
        order: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for &node in graph.keys() {
        if !walk.order.contains_key(&node) {
            walk.visit(node);
        }
    }
    walk.found
}

fn the_crate() -> Crate {
    let krate = Crate::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let named = |name: &str| krate.modules.iter().any(|m| m.name == name && !m.test);
    assert!(named("turn/") && named("exchange/handshake.rs"), "the walk found the crate's modules");
    assert!(krate.modules.iter().any(|m| m.name == "turn/tests.rs" && m.test), "the walk tells tests apart");
    krate
}

#[test]
fn no_circle_between_the_modules_of_the_production_code() {
    let krate = the_crate();
    let graph = krate.uses();
    let found = circles(&graph);
    let names = |part: &[usize]| part.iter().map(|&m| krate.modules[m].name.clone()).collect::<Vec<_>>();
    let known: Vec<Vec<String>> = KNOWN_CIRCLES.iter().map(|c| c.iter().map(|m| m.to_string()).collect()).collect();
    let new: Vec<String> = found
        .iter()
        .filter(|part| !known.contains(&names(part)))
        .map(|part| {
            let ties: Vec<String> = part
                .iter()
                .flat_map(|&from| {
                    graph[&from].iter().filter(|(to, _)| part.contains(to)).map(move |(&to, taken)| (from, to, taken))
                })
                .map(|(from, to, taken)| {
                    let taken = taken.iter().cloned().collect::<Vec<_>>().join(", ");
                    let taken = if taken.is_empty() { String::new() } else { format!(" ({taken})") };
                    format!("{} -> {}{taken}", krate.modules[from].name, krate.modules[to].name)
                })
                .collect();
            format!("{}: {}", names(part).join(" <-> "), ties.join("; "))
        })
        .collect();
    assert!(new.is_empty(), "modules of crates/core/src that use each other in a circle:\n{}", new.join("\n"));
    let gone: Vec<&Vec<String>> = known.iter().filter(|k| !found.iter().any(|part| &names(part) == *k)).collect();
    assert!(gone.is_empty(), "no longer circles: remove them from KNOWN_CIRCLES in rooms.rs: {gone:?}");
}

#[test]
fn no_production_file_over_the_limit() {
    let krate = the_crate();
    let production = || krate.modules.iter().filter(|m| !m.test);
    let long: Vec<String> = production()
        .filter(|m| m.lines > MAX_LINES && !KNOWN_LONG.contains(&m.name.as_str()))
        .map(|m| format!("{} ({} lines)", m.name, m.lines))
        .collect();
    assert!(long.is_empty(), "production files of crates/core/src over {MAX_LINES} lines: {}", long.join(", "));
    let gone: Vec<&&str> =
        KNOWN_LONG.iter().filter(|name| !production().any(|m| m.name == **name && m.lines > MAX_LINES)).collect();
    assert!(gone.is_empty(), "no longer over {MAX_LINES} lines: remove them from KNOWN_LONG in rooms.rs: {gone:?}");
}

/// Who uses the items `items` of module `of` in the production code, but the modules `but`:
/// each as "module (items)".
fn users_of(krate: &Crate, of: &str, items: Option<&[&str]>, but: &[&str]) -> Vec<String> {
    let graph = krate.uses();
    let mut found = Vec::new();
    for (&from, used) in &graph {
        let user = &krate.modules[from].name;
        for (&to, taken) in used {
            let module = &krate.modules[to].name;
            let taken: Vec<&str> = taken
                .iter()
                .map(String::as_str)
                .filter(|name| items.is_none_or(|items| items.contains(name)))
                .collect();
            let uses = module.starts_with(of) && (items.is_none() || !taken.is_empty());
            if uses && !but.contains(&user.as_str()) {
                found.push(format!("{user} -> {module} ({})", taken.join(", ")));
            }
        }
    }
    found
}

/// Turns, calls and logins run in one shell (`run.rs`): only it supervises their work and
/// starts and ends their `codex app-server` child.
#[test]
fn every_run_starts_and_ends_in_the_one_shell() {
    let krate = the_crate();
    let mut outside = users_of(&krate, "supervise.rs", None, &["run.rs"]);
    outside.extend(users_of(&krate, "app_server.rs", Some(&["start", "end"]), &["run.rs"]));
    assert!(outside.is_empty(), "a run's shell outside run.rs:\n{}", outside.join("\n"));
}

/// The wire (`transport.rs`, `rpc.rs`, `protocol/`) knows nothing of what a caller gives: it
/// uses nothing of `options/`, `turn/` or `call/`.
#[test]
fn the_wire_knows_nothing_of_the_callers() {
    let krate = the_crate();
    let wire: Vec<&str> = krate
        .modules
        .iter()
        .filter(|m| {
            !m.test && (m.name.starts_with("protocol/") || ["transport.rs", "rpc.rs"].contains(&m.name.as_str()))
        })
        .map(|m| m.name.as_str())
        .collect();
    assert!(wire.contains(&"protocol/requests.rs"), "the wire's modules: {wire:?}");
    let callers: Vec<&str> = krate.modules.iter().map(|m| m.name.as_str()).filter(|m| !wire.contains(m)).collect();
    let back: Vec<String> =
        ["options/", "turn/", "call/"].iter().flat_map(|room| users_of(&krate, room, None, &callers)).collect();
    assert!(back.is_empty(), "the wire uses what callers give:\n{}", back.join("\n"));
}

/// The reader sees what it must: paths in `use` groups and in macros, a test `cfg` however it
/// is written, and no more.
#[test]
fn the_reader_sees_every_use_of_the_production_code_and_no_test() {
    let source = r#"
        use super::{a::B, c, d::{self, e::F}};
        use crate::g::H as I;
        #[cfg(not(test))]
        use self::j::K;
        #[cfg(all(test, unix))]
        use crate::tested;
        pub(crate) fn f() {
            tracing::info!("{}", crate::l::m(super::super::n::O));
            child::z();
            #[cfg(test)]
            let _ = crate::tested::stmt();
        }
        pub struct S {
            #[cfg(any(test, windows))]
            pub field: crate::p::Q,
        }
        #[cfg(test)]
        mod tests {
            use crate::tested::module;
        }
    "#;
    let ast = syn::parse_file(source).unwrap();
    let at = ["x".to_string(), "y".to_string()];
    let mut tests = TestItems::default();
    let mut found = Vec::new();
    for mut item in ast.items {
        if !tests.gated(&item) {
            tests.visit_item_mut(&mut item);
            scan(item.into_token_stream(), &at, &mut found);
        }
    }
    let found: BTreeSet<String> = found.iter().map(|p| p.join("::")).collect();
    let expected = [
        "x::a::B",
        "x::c",
        "x::d",
        "x::d::e::F",
        "g::H",
        "x::y::j::K",
        "x::y::tracing::info",
        "l::m",
        "n::O",
        "x::y::child::z",
        "p::Q",
    ];
    assert_eq!(found, expected.iter().map(|p| p.to_string()).collect(), "{found:?}");
    // Three test items of two, two and four lines: `tested`'s `use`, the statement, the module.
    assert_eq!(tests.lines.len(), 2 + 2 + 4, "{:?}", tests.lines);
}

/// A circle through a room's `mod.rs` is seen; a submodule's use of its room, and a use through
/// a face, are not circles.
#[test]
fn a_circle_through_a_room_is_seen_and_nesting_is_not_one() {
    let files = [
        ("lib.rs", "mod a;\nmod c;\nmod d;\nmod face;\n#[cfg(test)]\nmod tests;\n"),
        ("a/mod.rs", "mod b;\nuse b::f;\npub const K: u8 = 1;\npub fn h() {\n    f()\n}\n"),
        ("a/b.rs", "pub fn f() {\n    crate::c::g()\n}\nfn k() -> u8 {\n    super::K\n}\n"),
        ("c.rs", "pub fn g() {\n    crate::a::h()\n}\n"),
        ("face/mod.rs", "mod x;\npub use x::*;\n"),
        ("face/x.rs", "pub fn y() {\n    crate::d::z()\n}\n"),
        ("d.rs", "pub fn z() {\n    crate::face::y()\n}\n"),
        ("tests.rs", "fn t() {\n    crate::d::z();\n    crate::a::h();\n}\n"),
    ];
    let (krate, found) = circles_of("nesting", &files);
    assert_eq!(found, vec![vec!["a/", "a/b.rs", "c.rs"]]);
    assert!(krate.modules.iter().any(|m| m.name == "tests.rs" && m.test));
}

/// A name a module's own `use` brought in is read as the path it stands for (`c::d::g()` after
/// `use crate::c;` uses `c/d.rs`); a room's re-export, seen from its submodules, stays the room's.
#[test]
fn a_path_through_a_use_is_read_as_what_it_names() {
    let files = [
        ("lib.rs", "mod a;\nmod c;\nmod e;\n"),
        ("a.rs", "use crate::c;\npub fn h() {\n    c::d::g()\n}\n"),
        ("c/mod.rs", "pub mod d;\n"),
        ("c/d.rs", "pub fn g() {\n    crate::a::h()\n}\n"),
        ("e/mod.rs", "mod f;\nmod g;\npub use g::K;\n"),
        ("e/f.rs", "pub fn x() -> u8 {\n    super::K\n}\n"),
        ("e/g.rs", "pub const K: u8 = 1;\npub fn y() {\n    super::f::x();\n}\n"),
    ];
    let (krate, found) = circles_of("aliases", &files);
    assert_eq!(found, vec![vec!["a.rs", "c/d.rs"]]);
    let users = users_of(&krate, "c/d.rs", Some(&["g"]), &[]);
    assert_eq!(users, vec!["a.rs -> c/d.rs (g)"]);
}

/// The crate made of `files` (path, text), and its circles by module name.
fn circles_of(name: &str, files: &[(&str, &str)]) -> (Crate, Vec<Vec<String>>) {
    let src = std::env::temp_dir().join(format!("rennet-rooms-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&src);
    for (file, text) in files {
        std::fs::create_dir_all(src.join(file).parent().unwrap()).unwrap();
        std::fs::write(src.join(file), text).unwrap();
    }
    let krate = Crate::read(&src);
    std::fs::remove_dir_all(&src).unwrap();
    let found = circles(&krate.uses())
        .iter()
        .map(|part| part.iter().map(|&m| krate.modules[m].name.clone()).collect())
        .collect();
    (krate, found)
}
