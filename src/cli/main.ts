#!/usr/bin/env node
import { reportCommandError } from "./exit-status.js";
import { cliProgram } from "./program.js";

cliProgram().parseAsync(process.argv).catch(reportCommandError);
