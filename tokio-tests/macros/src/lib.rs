//! `#[tokio::test]` and `#[tokio::main]` for the tokio facade
//! (`tokio-tests/facade`): the same attributes as tokio's, expanded to a
//! modelsync runtime instead of a tokio one.
//!
//! `#[tokio::main] async fn f() -> T { body }` becomes
//! `fn f() -> T { let body = async { body }; return <Builder>.block_on(body); }`,
//! where `<Builder>` is, as in tokio's macros,
//! `tokio::runtime::Builder::new_multi_thread()[.worker_threads(N)].enable_all().build().expect(..)`
//! or `tokio::runtime::Builder::new_current_thread().enable_all().build().expect(..)`
//! (the facade's `Builder`). `#[tokio::test]` is the same with
//! `#[::core::prelude::v1::test]` added. The options:
//!
//! - `flavor = "multi_thread"`: a modelsync runtime, `worker_threads = N` as
//!   given (by default, modelsync's default: the available parallelism);
//! - `flavor = "current_thread"`, tokio's default: `new_current_thread()`,
//!   which modelsync does not have; the facade maps it to a runtime with one
//!   worker thread, apart from the thread that blocks on the body, as
//!   modelsync's runtimes always are (the facade's `Builder` documents it);
//! - `crate = "path"`: the path of the facade, as tokio's option;
//! - `flavor = "local"`, `start_paused`, `unhandled_panic` and `name` name
//!   things modelsync's runtime does not have: each is a compile error that
//!   says so, rather than being ignored.
//!
//! Written on `proc_macro` alone (no `syn`, `quote`): it needs only to find
//! the `async` keyword and the body of the function, and to read `key = value`
//! options.

use proc_macro::{Delimiter, Group, TokenStream, TokenTree};

/// tokio's `#[tokio::main]`, on a modelsync runtime (see the crate's
/// documentation).
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(args, item, false)
}

/// tokio's `#[tokio::test]`, on a modelsync runtime (see the crate's
/// documentation).
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(args, item, true)
}

/// What the attribute's options ask for.
struct Options {
    /// tokio's default flavour: `Builder::new_current_thread()`.
    current_thread: bool,
    /// `Some(n)`: `worker_threads(n)`; `None`: modelsync's default.
    worker_threads: Option<TokenStream>,
    /// The facade's path: `::tokio` unless `crate = "..."` says otherwise.
    crate_path: TokenStream,
}

fn expand(args: TokenStream, item: TokenStream, is_test: bool) -> TokenStream {
    match options(args).and_then(|options| rewrite(item.clone(), &options, is_test)) {
        Ok(tokens) => tokens,
        Err(message) => {
            // The item as it was, so that no other error follows from its
            // absence, and the reason.
            let mut tokens = item;
            tokens.extend(compile_error(&message));
            tokens
        }
    }
}

fn compile_error(message: &str) -> TokenStream {
    format!("::core::compile_error!({message:?});")
        .parse()
        .expect("a compile_error! invocation parses")
}

fn options(args: TokenStream) -> Result<Options, String> {
    let mut flavor = None;
    let mut worker_threads = None;
    let mut crate_path = None;
    let mut pieces = vec![Vec::new()];
    for token in args {
        match &token {
            TokenTree::Punct(punct) if punct.as_char() == ',' => pieces.push(Vec::new()),
            _ => pieces.last_mut().expect("never empty").push(token),
        }
    }
    for piece in pieces.into_iter().filter(|piece| !piece.is_empty()) {
        let (key, value) = match piece.as_slice() {
            [TokenTree::Ident(key), TokenTree::Punct(eq), value @ ..]
                if eq.as_char() == '=' && !value.is_empty() =>
            {
                (
                    key.to_string(),
                    value.iter().cloned().collect::<TokenStream>(),
                )
            }
            _ => {
                return Err(format!(
                    "expected `key = value`, found `{}`",
                    piece.into_iter().collect::<TokenStream>()
                ))
            }
        };
        match key.as_str() {
            "flavor" => flavor = Some(string_value(&key, &value)?),
            "worker_threads" => worker_threads = Some(value),
            "crate" => {
                let path = string_value(&key, &value)?;
                crate_path = Some(
                    path.parse::<TokenStream>()
                        .map_err(|_| format!("`crate = {path:?}` is not a path"))?,
                );
            }
            "start_paused" => {
                return Err("`start_paused`: modelsync's runtime has no timers \
                     (modelsync::runtime's documentation)"
                    .to_owned())
            }
            "unhandled_panic" => {
                return Err(
                    "`unhandled_panic`: modelsync's runtime always reports a task's \
                     panic through its JoinHandle (modelsync::runtime's documentation)"
                        .to_owned(),
                )
            }
            "name" => {
                return Err("`name`: modelsync's runtime has no name \
                     (modelsync::runtime's documentation)"
                    .to_owned())
            }
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    let current_thread = match flavor.as_deref() {
        Some("multi_thread") => false,
        None | Some("current_thread") => {
            if worker_threads.is_some() {
                // tokio's own message for the same mistake.
                return Err(
                    "The `worker_threads` option requires the `multi_thread` runtime \
                     flavor. Use `#[tokio::test(flavor = \"multi_thread\")]`"
                        .to_owned(),
                );
            }
            true
        }
        Some("local") => {
            return Err("`flavor = \"local\"`: modelsync has no LocalRuntime \
                 (modelsync::runtime's documentation)"
                .to_owned())
        }
        Some(other) => {
            return Err(format!(
                "unknown flavor {other:?}: expected \"multi_thread\" or \"current_thread\""
            ))
        }
    };
    Ok(Options {
        current_thread,
        worker_threads,
        crate_path: crate_path.unwrap_or_else(|| "::tokio".parse().expect("a path parses")),
    })
}

/// The text of a string literal `value`, without its quotes.
fn string_value(key: &str, value: &TokenStream) -> Result<String, String> {
    let text = value.to_string();
    match text
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    {
        Some(inner) if !inner.contains(['"', '\\']) => Ok(inner.to_owned()),
        _ => Err(format!("`{key}` takes a string, found `{text}`")),
    }
}

/// The function without `async`, its body run on a modelsync runtime.
fn rewrite(item: TokenStream, options: &Options, is_test: bool) -> Result<TokenStream, String> {
    let mut tokens: Vec<TokenTree> = item.into_iter().collect();
    let body = match tokens.pop() {
        Some(TokenTree::Group(body)) if body.delimiter() == Delimiter::Brace => body,
        _ => return Err("expected a function with a body".to_owned()),
    };
    let is_ident = |token: &TokenTree, name: &str| matches!(token, TokenTree::Ident(i) if i.to_string() == name);
    let fn_at = tokens
        .iter()
        .position(|token| is_ident(token, "fn"))
        .ok_or("expected a function")?;
    let async_at = tokens[..fn_at]
        .iter()
        .position(|token| is_ident(token, "async"))
        // tokio's own message.
        .ok_or("the `async` keyword is missing from the function declaration")?;
    tokens.remove(async_at);

    let mut runtime = options.crate_path.clone();
    runtime.extend(parse(if options.current_thread {
        "::runtime::Builder::new_current_thread()"
    } else {
        "::runtime::Builder::new_multi_thread()"
    }));
    if let Some(count) = &options.worker_threads {
        runtime.extend(parse(".worker_threads"));
        runtime.extend([TokenTree::Group(Group::new(
            Delimiter::Parenthesis,
            count.clone(),
        ))]);
    }
    runtime.extend(parse(
        ".enable_all().build().expect(\"Failed building the Runtime\").block_on(body)",
    ));

    let mut new_body = parse("let body = async");
    new_body.extend([TokenTree::Group(body.clone())]);
    new_body.extend(parse(
        "; #[allow(clippy::expect_used, clippy::diverging_sub_expression, clippy::needless_return)]",
    ));
    let mut run = parse("return");
    run.extend(runtime);
    run.extend(parse(";"));
    new_body.extend([TokenTree::Group(Group::new(Delimiter::Brace, run))]);

    let mut out = TokenStream::new();
    if is_test {
        out.extend(parse("#[::core::prelude::v1::test]"));
    }
    out.extend(tokens);
    let mut new_body = Group::new(Delimiter::Brace, new_body);
    new_body.set_span(body.span());
    out.extend([TokenTree::Group(new_body)]);
    Ok(out)
}

fn parse(text: &str) -> TokenStream {
    text.parse().expect("the macro's own tokens parse")
}
