//! The state shared by the report's sections: where files go, which files were written, the
//! settings the lab measured with, and the Markdown helpers every section uses.

use std::path::PathBuf;

use phishbloom_lab::measure::Settings;

use crate::error::Result;
use crate::output::{write_atomic_text, Table};
use crate::plot::{self, Panel};

/// What every section's renderer gets.
#[derive(Debug)]
pub struct Context {
    /// The output directory.
    pub out: PathBuf,
    /// What the lab measured with: the dataset, quick or full sizes, threads, the run's clock.
    pub settings: Settings,
    /// Files written so far, in order.
    pub files: Vec<PathBuf>,
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
