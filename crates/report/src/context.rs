//! The state shared by the report's sections: where files go, which files were written, the
//! sizes in force, and the Markdown helpers every section uses.

use std::path::PathBuf;
use std::time::Instant;

use crate::error::Result;
use crate::output::{write_atomic_text, Table};
use crate::plot::{self, Panel};
use crate::sizes::Sizes;

/// What every section gets.
#[derive(Debug)]
pub struct Context {
    /// The output directory.
    pub out: PathBuf,
    /// The labelled dataset.
    pub data: PathBuf,
    /// Quick or full.
    pub quick: bool,
    /// The sizes in force.
    pub sizes: Sizes,
    /// Threads for inserting and querying.
    pub threads: usize,
    /// Print progress lines to standard error.
    pub verbose: bool,
    /// Files written so far, in order.
    pub files: Vec<PathBuf>,
    /// When the run started.
    pub started: Instant,
    /// One line per headline result, for the command's summary.
    pub headlines: Vec<String>,
}

impl Context {
    /// Writes `table` as `name` (a `.csv` file name) and returns the name, for links.
    pub fn write_csv(&mut self, name: &str, table: &Table) -> Result<String> {
        self.write(name, &table.to_csv())?;
        Ok(name.to_string())
    }

    /// Draws `panels` into `name` (an `.svg` file name) and returns the name, for links.
    pub fn write_svg(
        &mut self,
        name: &str,
        title: &str,
        panels: &[Panel],
        size: (u32, u32),
    ) -> Result<String> {
        let path = self.out.join(name);
        let svg = plot::render(&path, title, panels, size)?;
        self.write(name, &svg)?;
        Ok(name.to_string())
    }

    /// Writes a text file into the output directory atomically and records it.
    pub fn write(&mut self, name: &str, text: &str) -> Result<()> {
        let path = self.out.join(name);
        write_atomic_text(&path, text)?;
        self.files.push(path);
        Ok(())
    }

    /// A progress line on standard error, with the time since the start.
    pub fn progress(&self, message: &str) {
        if self.verbose {
            eprintln!(
                "report [{:6.1} s] {message}",
                self.started.elapsed().as_secs_f64()
            );
        }
    }

    /// The path of a file in the output directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.out.join(name)
    }
}

/// A Markdown table.
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut text = format!("| {} |\n", header.join(" | "));
    text.push_str(&format!(
        "|{}\n",
        header.iter().map(|_| " --- |").collect::<String>()
    ));
    for row in rows {
        text.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    text
}

/// A Markdown image with a link to the CSV behind it.
pub fn figure(svg: &str, alt: &str, csv: &str) -> String {
    format!("![{alt}]({svg})\n\n*Data: [{csv}]({csv}).*\n")
}
