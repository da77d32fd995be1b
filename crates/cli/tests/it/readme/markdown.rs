//! The console blocks of a Markdown page: each ```` ```console ```` block's `$` commands, the
//! output shown under each, the `## ` section it is in, and whether it is marked skipped.

/// One `$` command of a block and the output the page shows for it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Step {
    /// The page's line of the `$`.
    pub(super) line: usize,
    /// The command as the page writes it (continuation lines joined, comment removed).
    pub(super) command: String,
    /// The lines the page shows under it.
    pub(super) expected: Vec<String>,
}

/// One console block.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Block {
    /// The page's line of the opening fence.
    pub(super) line: usize,
    /// The `## ` heading the block is under (`(top)` before the first).
    pub(super) section: String,
    /// Which `## ` heading of the page that is, counting from 1 (0 before the first): blocks
    /// with the same number run in one directory, even under two headings of the same text.
    pub(super) section_number: usize,
    /// The reason given by a `readme-test: skip` comment on the line before the block.
    pub(super) skip: Option<String>,
    /// Its commands, in order.
    pub(super) steps: Vec<Step>,
}

/// The console blocks of the Markdown text of `page` (named in errors). A `## ` line inside
/// another fenced block (a shell comment in a ```` ```sh ```` block) is not a heading.
pub(super) fn parse_blocks(page: &str, text: &str) -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    let mut section = String::from("(top)");
    let mut section_number = 0;
    let mut fenced = false;
    let mut previous = "";
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    while let Some((number, line)) = lines.next() {
        if line.trim_end() != "```console" {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            } else if let Some(heading) = line.strip_prefix("## ").filter(|_| !fenced) {
                section = heading.trim().to_string();
                section_number += 1;
            }
            if !line.trim().is_empty() {
                previous = line;
            }
            continue;
        }
        let skip = previous
            .trim()
            .strip_prefix("<!-- readme-test: skip (")
            .and_then(|rest| rest.strip_suffix(") -->"))
            .map(str::to_string);
        let mut block = Block {
            line: number,
            section: section.clone(),
            section_number,
            skip,
            steps: Vec::new(),
        };
        let mut continued = false;
        loop {
            let Some((number, line)) = lines.next() else {
                return Err(format!("{page}:{}: console block never closed", block.line));
            };
            if line.trim_end() == "```" {
                break;
            }
            if continued {
                let step = block
                    .steps
                    .last_mut()
                    .expect("a continuation follows a command");
                step.command.push('\n');
                step.command.push_str(strip_comment(line));
                continued = line.ends_with('\\');
            } else if let Some(command) = line.strip_prefix("$ ") {
                block.steps.push(Step {
                    line: number,
                    command: strip_comment(command).to_string(),
                    expected: Vec::new(),
                });
                continued = line.ends_with('\\');
            } else if let Some(step) = block.steps.last_mut() {
                step.expected.push(line.trim_end().to_string());
            } else {
                return Err(format!("{page}:{number}: output before any `$` command"));
            }
        }
        previous = "```";
        blocks.push(block);
    }
    Ok(blocks)
}

/// `line` without a trailing reader's comment: two or more spaces, then `# `, outside quotes.
fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut quote = None;
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if b == b'#'
                && i >= 2
                && bytes[i - 2..i] == *b"  "
                && matches!(bytes.get(i + 1), None | Some(b' ')) =>
            {
                return line[..i].trim_end();
            }
            None => {}
        }
    }
    line.trim_end()
}

fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

#[test]
fn parser_reads_commands_continuations_comments_and_skips() {
    let text =
        "## One\n\n```console\n$ a --x   # a note\nout 1\n$ b \\\n    -d 'x  # y'\n...\n```\n\n\
                ## Two\n<!-- readme-test: skip (needs a display) -->\n```console\n$ c\n```\n\
                ```sh\n$ not console\n```\n";
    let blocks = parse_blocks("page.md", text).expect("parses");
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0].section, "One");
    assert_eq!(blocks[0].skip, None);
    assert_eq!(
        blocks[0].steps,
        vec![
            Step {
                line: 4,
                command: "a --x".into(),
                expected: strings(&["out 1"]),
            },
            Step {
                line: 6,
                command: "b \\\n    -d 'x  # y'".into(),
                expected: strings(&["..."]),
            },
        ]
    );
    assert_eq!(blocks[1].section, "Two");
    assert_eq!(blocks[1].skip.as_deref(), Some("needs a display"));
}

#[test]
fn parser_errors_name_the_page_and_line() {
    assert_eq!(
        parse_blocks("docs/guide/x.md", "text\n```console\noutput first\n```\n"),
        Err("docs/guide/x.md:3: output before any `$` command".to_string())
    );
    assert_eq!(
        parse_blocks("README.md", "```console\n$ never closed\n"),
        Err("README.md:1: console block never closed".to_string())
    );
}

#[test]
fn parser_numbers_sections_by_heading_and_ignores_headings_in_other_fences() {
    let text = "```console\n$ a\n```\n\
                ## Same\n```console\n$ b\n```\n\
                ```sh\n## not a heading: a shell comment\n```\n\
                ```console\n$ c\n```\n\
                ### Sub\n```console\n$ d\n```\n\
                ## Same\n```console\n$ e\n```\n";
    let blocks = parse_blocks("page.md", text).expect("parses");
    let sections: Vec<(usize, &str)> = blocks
        .iter()
        .map(|b| (b.section_number, b.section.as_str()))
        .collect();
    assert_eq!(
        sections,
        vec![
            (0, "(top)"),
            (1, "Same"),
            (1, "Same"),
            (1, "Same"),
            (2, "Same"),
        ]
    );
}
