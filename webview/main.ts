console.log("webview");
