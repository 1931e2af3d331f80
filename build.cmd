@echo off
rem Builds jemalloc.NET on Windows x64: the native jemalloc 5.3.0 with MSVC (je_ prefix, jemallocnet.dll),
rem then the solution. Written for Windows; it has not been run on Windows by the project yet.
rem
rem   build.cmd            native jemalloc (if not built yet) + the solution in Release
rem   build.cmd native     only the native library
rem   build.cmd test       ... then runs the test suite
rem   build.cmd pack       ... then makes the NuGet package into artifacts\packages
rem
rem Needs:
rem   - Visual Studio 2017, 2019 or 2022 (or Build Tools) with "Desktop development with C++" (MSVC x64 and a
rem     Windows 10/11 SDK). Run from an "x64 Native Tools Command Prompt", or let this script find Visual Studio.
rem   - A POSIX shell with sed, grep and awk (Cygwin, MSYS2 or Git for Windows): jemalloc's msvc\ projects need
rem     headers that its configure script generates. Set POSIX_SH to its sh.exe if it is not found.
rem   - The jemalloc 5.3.0 source: the release tarball jemalloc-5.3.0.tar.bz2 (the same bytes as Debian's
rem     jemalloc_5.3.0.orig.tar.bz2) in jemalloc\download\, or JEMALLOC_SRC set to the tarball or to an
rem     unpacked source directory. This script downloads nothing.
rem   - The .NET 10 SDK (dotnet) on PATH.
rem
rem Environment:
rem   JEMALLOC_SRC=path     the jemalloc 5.3.0 tarball (.tar.bz2) or unpacked source directory
rem   JEMALLOC_DEBUG=1      a checked jemalloc build (--enable-debug, MSVC Debug configuration)
rem   POSIX_SH=path\sh.exe  the POSIX shell to run jemalloc's configure with
rem   CONFIGURATION=Debug   build the solution in Debug instead of Release
setlocal EnableExtensions EnableDelayedExpansion

set "ROOT=%~dp0"
if "%ROOT:~-1%"=="\" set "ROOT=%ROOT:~0,-1%"
set "JEMALLOC_VERSION=5.3.0"
set "JEMALLOC_GIT_VERSION=5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c"
set "JEMALLOC_SHA256=2db82d1e7119df3e71b7640219b6dfe84789bc0537983c3b7ac4f7189aecfeaa"
set "NATIVE_DIR=%ROOT%\jemalloc"
set "OUTPUT_DIR=%NATIVE_DIR%\bin\win-x64"
set "OUTPUT_DLL=%OUTPUT_DIR%\jemallocnet.dll"
if not defined CONFIGURATION set "CONFIGURATION=Release"
if "%JEMALLOC_DEBUG%"=="1" (set "FLAVOR=debug") else (set "FLAVOR=release")
set "CONFIGURE_FLAGS=--with-jemalloc-prefix=je_ --with-install-suffix=net --disable-cxx --disable-initial-exec-tls --enable-stats --with-version=%JEMALLOC_GIT_VERSION%"
if "%FLAVOR%"=="debug" set "CONFIGURE_FLAGS=%CONFIGURE_FLAGS% --enable-debug"

set "COMMAND=%~1"
if "%COMMAND%"=="" set "COMMAND=build"
if /i "%COMMAND%"=="help" goto :usage
if /i "%COMMAND%"=="-h" goto :usage
if /i "%COMMAND%"=="native" goto :command_native
if /i "%COMMAND%"=="build" goto :command_build
if /i "%COMMAND%"=="test" goto :command_build
if /i "%COMMAND%"=="pack" goto :command_build
echo build.cmd: error: unknown command '%COMMAND%' (try: build, native, test, pack, help) 1>&2
exit /b 2

:command_native
call :build_native
if errorlevel 1 goto :failed
goto :done

:command_build
call :build_native
if errorlevel 1 goto :failed
call :build_solution
if errorlevel 1 goto :failed
if /i "%COMMAND%"=="test" goto :command_test
if /i "%COMMAND%"=="pack" goto :command_pack
goto :done

:command_test
echo.
echo ==^> running the tests
dotnet test "%ROOT%\jemalloc.NET.sln" -c %CONFIGURATION% --no-build --nologo
if errorlevel 1 goto :failed
goto :done

:command_pack
echo.
echo ==^> packing jemalloc.NET
dotnet pack "%ROOT%\jemalloc.Api\jemalloc.Api.csproj" -c %CONFIGURATION% --no-build --nologo -o "%ROOT%\artifacts\packages"
if errorlevel 1 goto :failed
goto :done

:usage
echo usage: build.cmd [build^|native^|test^|pack^|help]
echo   build    native jemalloc (if not built yet) + the solution in Release (the default)
echo   native   only the native library (jemalloc\bin\win-x64\jemallocnet.dll)
echo   test     build, then run the test suite
echo   pack     build, then make the NuGet package into artifacts\packages
echo environment: JEMALLOC_SRC, JEMALLOC_DEBUG=1, POSIX_SH, CONFIGURATION (see the top of build.cmd)
exit /b 0

:done
echo.
echo build.cmd: done.
exit /b 0

:failed
echo. 1>&2
echo build.cmd: failed (see the message above). 1>&2
exit /b 1

rem ---------------------------------------------------------------------------------------------------
:build_native
if not "%PROCESSOR_ARCHITECTURE%"=="AMD64" if not "%PROCESSOR_ARCHITEW6432%"=="AMD64" (
  echo build.cmd: error: jemalloc.NET builds for Windows x64 only; this is %PROCESSOR_ARCHITECTURE%. 1>&2
  exit /b 1
)
if exist "%OUTPUT_DLL%" if exist "%OUTPUT_DIR%\FLAVOR" (
  set /p BUILT_FLAVOR=<"%OUTPUT_DIR%\FLAVOR"
  if "!BUILT_FLAVOR!"=="%FLAVOR%" (
    echo native library: %OUTPUT_DLL% ^(%FLAVOR%, up to date; delete it to rebuild^)
    exit /b 0
  )
)
call :find_msvc
where cl.exe >nul 2>&1
if not errorlevel 1 goto :msvc_on_path
set "VSWHERE_DIR=%ProgramFiles(x86)%\Microsoft Visual Studio\Installer"
if not exist "%VSWHERE_DIR%\vswhere.exe" (
  echo build.cmd: error: cl.exe is not on PATH and Visual Studio's vswhere.exe was not found. 1>&2
  echo   Install Visual Studio 2017 or later with "Desktop development with C++", or run this from an 1>&2
  echo   "x64 Native Tools Command Prompt". 1>&2
  exit /b 1
)
set "PATH=%PATH%;%VSWHERE_DIR%"
set "VSINSTALL="
for /f "usebackq tokens=* delims=" %%I in (`vswhere.exe -latest -products * -requires Microsoft.VisualStudio.Component.VC.Tools.x86.x64 -property installationPath`) do set "VSINSTALL=%%I"
if not defined VSINSTALL (
  echo build.cmd: error: no Visual Studio with the MSVC x64 tools ^(component VC.Tools.x86.x64^) was found. 1>&2
  exit /b 1
)
if not exist "%VSINSTALL%\VC\Auxiliary\Build\vcvars64.bat" (
  echo build.cmd: error: "%VSINSTALL%\VC\Auxiliary\Build\vcvars64.bat" is missing. 1>&2
  exit /b 1
)
call "%VSINSTALL%\VC\Auxiliary\Build\vcvars64.bat" >nul
where cl.exe >nul 2>&1
if errorlevel 1 (
  echo build.cmd: error: vcvars64.bat did not put cl.exe on PATH. 1>&2
  exit /b 1
)
:msvc_on_path
if /i not "%VSCMD_ARG_TGT_ARCH%"=="" if /i not "%VSCMD_ARG_TGT_ARCH%"=="x64" (
  echo build.cmd: error: the compiler on PATH targets %VSCMD_ARG_TGT_ARCH%; use an x64 Native Tools Command Prompt. 1>&2
  exit /b 1
)
where msbuild.exe >nul 2>&1
if errorlevel 1 (
  echo build.cmd: error: msbuild.exe is not on PATH ^(it comes with Visual Studio^). 1>&2
  exit /b 1
)
set "TOOLSET="
if "%VisualStudioVersion%"=="17.0" set "TOOLSET=v143"
if "%VisualStudioVersion%"=="16.0" set "TOOLSET=v142"
if "%VisualStudioVersion%"=="15.0" set "TOOLSET=v141"
if not defined TOOLSET (
  echo build.cmd: error: unknown Visual Studio version '%VisualStudioVersion%' ^(expected 15.0, 16.0 or 17.0^). 1>&2
  exit /b 1
)
exit /b 0

rem ---------------------------------------------------------------------------------------------------
:find_sh
if defined POSIX_SH (
  if not exist "%POSIX_SH%" (echo build.cmd: error: POSIX_SH=%POSIX_SH% does not exist. 1>&2 & exit /b 1)
  goto :check_sh
)
for %%C in ("C:\cygwin64\bin\sh.exe" "C:\cygwin\bin\sh.exe" "C:\msys64\usr\bin\sh.exe" "%ProgramFiles%\Git\usr\bin\sh.exe") do (
  if not defined POSIX_SH if exist %%C set "POSIX_SH=%%~C"
)
if not defined POSIX_SH for /f "usebackq tokens=* delims=" %%S in (`where sh.exe 2^>nul`) do if not defined POSIX_SH set "POSIX_SH=%%S"
if not defined POSIX_SH (
  echo build.cmd: error: no POSIX shell found. Install Cygwin ^(with sed, grep, gawk^), MSYS2 or Git for Windows, 1>&2
  echo   or set POSIX_SH to its sh.exe. jemalloc's configure script needs it to generate the headers. 1>&2
  exit /b 1
)
:check_sh
rem The shell's own bin folder must come first so configure finds its sed, grep and awk.
for %%D in ("%POSIX_SH%") do set "PATH=%%~dpD;%PATH%"
"%POSIX_SH%" -c "command -v sed >/dev/null && command -v grep >/dev/null && command -v awk >/dev/null"
if errorlevel 1 (
  echo build.cmd: error: %POSIX_SH% lacks sed, grep or awk ^(install them in Cygwin/MSYS2^). 1>&2
  exit /b 1
)
exit /b 0

rem ---------------------------------------------------------------------------------------------------
:prepare_source
set "TARBALL="
set "SRC_DIR=%NATIVE_DIR%\build\win-x64\jemalloc-%JEMALLOC_VERSION%"
if defined JEMALLOC_SRC (
  if exist "%JEMALLOC_SRC%\configure" (
    rem A directory: copy it, so configure's generated files do not land in the user's tree.
    if exist "%SRC_DIR%" rmdir /s /q "%SRC_DIR%"
    robocopy "%JEMALLOC_SRC%" "%SRC_DIR%" /e /nfl /ndl /njh /njs /nc /ns /np >nul
    if errorlevel 8 (echo build.cmd: error: copying %JEMALLOC_SRC% failed. 1>&2 & exit /b 1)
    exit /b 0
  )
  if not exist "%JEMALLOC_SRC%" (
    echo build.cmd: error: JEMALLOC_SRC=%JEMALLOC_SRC% is neither a jemalloc source directory nor a file. 1>&2
    exit /b 1
  )
  set "TARBALL=%JEMALLOC_SRC%"
) else (
  for %%T in ("%NATIVE_DIR%\download\jemalloc_%JEMALLOC_VERSION%.orig.tar.bz2" "%NATIVE_DIR%\download\jemalloc-%JEMALLOC_VERSION%.tar.bz2") do (
    if not defined TARBALL if exist %%T set "TARBALL=%%~T"
  )
)
if not defined TARBALL (
  echo build.cmd: error: no jemalloc %JEMALLOC_VERSION% source found. 1>&2
  echo   Put the release tarball jemalloc-%JEMALLOC_VERSION%.tar.bz2 ^(from the jemalloc project's %JEMALLOC_VERSION% release, or 1>&2
  echo   Debian's jemalloc_%JEMALLOC_VERSION%.orig.tar.bz2, which build.sh fetches on Linux^) into %NATIVE_DIR%\download\, 1>&2
  echo   or set JEMALLOC_SRC to it or to an unpacked source directory. 1>&2
  exit /b 1
)
set "ACTUAL_SHA256="
for /f "skip=1 tokens=* delims=" %%H in ('certutil -hashfile "%TARBALL%" SHA256') do if not defined ACTUAL_SHA256 set "ACTUAL_SHA256=%%H"
set "ACTUAL_SHA256=%ACTUAL_SHA256: =%"
if /i not "%ACTUAL_SHA256%"=="%JEMALLOC_SHA256%" (
  echo build.cmd: error: checksum mismatch for %TARBALL%: expected %JEMALLOC_SHA256%, got %ACTUAL_SHA256%. 1>&2
  exit /b 1
)
echo.
echo ==^> unpacking %TARBALL%
if exist "%SRC_DIR%" rmdir /s /q "%SRC_DIR%"
if not exist "%NATIVE_DIR%\build\win-x64" mkdir "%NATIVE_DIR%\build\win-x64"
rem Windows 10 1803 and later include tar.exe (bsdtar), which reads .tar.bz2.
tar -xjf "%TARBALL%" -C "%NATIVE_DIR%\build\win-x64"
if errorlevel 1 (echo build.cmd: error: tar could not unpack %TARBALL%. 1>&2 & exit /b 1)
if not exist "%SRC_DIR%\configure" (
  echo build.cmd: error: unpacking %TARBALL% did not give %SRC_DIR%\configure. 1>&2
  exit /b 1
)
exit /b 0

rem ---------------------------------------------------------------------------------------------------
:build_solution
where dotnet >nul 2>&1
if errorlevel 1 (
  echo build.cmd: error: the .NET 10 SDK ^(dotnet^) is not on PATH. 1>&2
  exit /b 1
)
echo.
echo ==^> building jemalloc.NET.sln (%CONFIGURATION%)
dotnet build "%ROOT%\jemalloc.NET.sln" -c %CONFIGURATION% --nologo -v minimal
if errorlevel 1 (echo build.cmd: error: dotnet build failed. 1>&2 & exit /b 1)
exit /b 0
