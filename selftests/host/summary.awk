# Summarise the guest console (see guest/init.sh for its markers):
#   awk [-v build_error=MSG] -f summary.awk console.log
# (build_error: the artifacts did not build; counted as one failure)
# Counts every top-level `ok`/`not ok` case of each test script, and for KUnit
# every case inside each suite (a suite line counts only when its suite shows
# no cases, e.g. when its init failed). SKIPs are counted apart, and so are
# TODOs (KTAP "# TODO": an expectation not required yet; never a failure,
# listed as "TODO test: case" while it is not met). A test that
# ran fewer cases than planned, timed out, or exited non-zero without a failing
# case counts one failure more, and so does a guest that never finished.
# Prints each failure with the diagnostics before it, a line per test, and
# last exactly "N passed, N failed[, N skipped][, N todo]". Exit status 0 only if nothing
# failed, the guest finished and at least one case ran.

function fail_extra(msg) {
	nfail++; tfail++
	printf "FAIL %s: %s\n", name, msg
}

function result(line, indent,    ok, desc, n) {
	ok = (line !~ /^not ok/)
	desc = line
	sub(/^(not )?ok [0-9]+ ?(- )?/, "", desc)
	if (desc ~ /# *[Tt][Oo][Dd][Oo]/) {
		# an expectation not required yet: reported, never a failure
		ntodo++; ttodo++
		if (!ok)
			printf "TODO %s: %s\n", name, desc
	} else if (desc ~ /# *[Ss][Kk][Ii][Pp]/) {
		nskip++; tskip++
	} else if (ok) {
		npass++; tpass++
	} else {
		nfail++; tfail++
		printf "FAIL %s: %s\n", name, desc
		for (n = 0; n < ndiag; n++)
			printf "    %s\n", diag[n]
	}
	ndiag = 0
	cases++
}

function keep_diag(line) {
	if (ndiag < 40)
		diag[ndiag++] = line
}

function end_section(rc, secs) {
	if (kind == "test") {
		if (rc == 124 || rc == 137) {
			fail_extra("timed out after " cases " cases")
		} else if (skipall) {
			nskip++; tskip++
		} else if (plan == "" && cases == 0) {
			fail_extra("no KTAP output (exit " rc ")")
		} else if (plan != "" && cases < plan) {
			fail_extra("ran " cases " of " plan " planned cases (exit " rc ")")
		} else if (plan != "" && cases > plan) {
			fail_extra("ran " cases " cases but planned " plan)
		} else if (rc != 0 && tfail == 0) {
			fail_extra("exited with status " rc " but reported no failure")
		}
	} else if (kind == "kunit" && cases == 0) {
		fail_extra("no KUnit results (modprobe exit " rc ")")
	}
	report[nreport++] = sprintf("  %-28s %3d passed, %3d failed, %3d skipped  %4s s%s", \
		name, tpass, tfail, tskip, secs, ttodo ? sprintf(", %d todo", ttodo) : "")
	kind = ""
}

/^#@ (test|kunit) / {
	kind = $2; name = $3
	plan = ""; skipall = 0; cases = 0; suite_cases = 0; ndiag = 0
	tpass = tfail = tskip = ttodo = 0
	next
}
/^#@ end / && kind != "" {
	rc = $4; sub(/^rc=/, "", rc)
	secs = $5; sub(/^secs=/, "", secs)
	end_section(rc + 0, secs)
	next
}
/^#@ done/ { done = 1; next }
/^#@/ { next }

kind == "test" {
	if ($0 ~ /^1\.\.[0-9]+/) {
		plan = $0; sub(/^1\.\./, "", plan); sub(/[^0-9].*/, "", plan); plan += 0
		if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) skipall = 1
	} else if ($0 ~ /^(not )?ok [0-9]+/) {
		result($0)
	} else if ($0 ~ /^#/) {
		keep_diag($0)
	}
	next
}

kind == "kunit" {
	line = $0
	match(line, /^ */)
	depth = int(RLENGTH / 4)
	sub(/^ */, "", line)
	if (line ~ /^(not )?ok [0-9]+/) {
		if (depth == 1) {
			result(line)
			suite_cases++
		} else if (depth == 0) {
			if (suite_cases == 0)
				result(line)
			suite_cases = 0
			ndiag = 0
		}
	} else if (line ~ /^KTAP version/) {
		if (depth == 0) ndiag = 0
	} else if (line !~ /^1\.\.[0-9]/) {
		keep_diag(line) # "# case: EXPECTATION FAILED ..." and its lines
	}
	next
}

END {
	if (kind != "") {
		fail_extra("did not finish (the guest stopped during it)")
		report[nreport++] = sprintf("  %-28s did not finish", name)
	} else if (!done) {
		name = "guest"
		fail_extra("did not finish (no sentinel on the console)")
	}
	if (build_error != "") {
		name = "build"
		fail_extra(build_error)
	}
	for (i = 0; i < nreport; i++)
		print report[i]
	line = sprintf("%d passed, %d failed", npass, nfail)
	if (nskip)
		line = line sprintf(", %d skipped", nskip)
	if (ntodo)
		line = line sprintf(", %d todo", ntodo)
	print line
	exit (nfail == 0 && done && npass + nfail > 0) ? 0 : 1
}
